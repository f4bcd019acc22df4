import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dagColumns, graphLayout } from '../../examples/web/dag-layout.js';

describe('the dashboard\'s graph layout', () => {
  it('puts each task one column after its furthest parent, in plan order', () => {
    expect(dagColumns([
      { id: 'research', dependentTasks: [] },
      { id: 'outline', dependentTasks: [] },
      { id: 'draft', dependentTasks: ['research', 'outline'] },
      { id: 'review', dependentTasks: ['draft', 'research'] },
    ])).toEqual([['research', 'outline'], ['draft'], ['review']]);
  });

  it('ignores parents that are not tasks of the plan and survives a cycle', () => {
    expect(dagColumns([{ id: 'a', dependentTasks: ['node-start'] }])).toEqual([['a']]);
    expect(dagColumns([{ id: 'a', dependentTasks: ['b'] }, { id: 'b', dependentTasks: ['a'] }]).flat().sort()).toEqual(['a', 'b']);
  });

  it('property: every task appears once, and every edge of an acyclic plan points to a later column', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat(), { maxLength: 3 }), { maxLength: 12 }), (parents) => {
        // Task i may depend only on earlier tasks: acyclic by construction.
        const tasks = parents.map((picks, index) => ({ id: `t${index}`, dependentTasks: index === 0 ? [] : picks.map((pick) => `t${pick % index}`) }));
        const columns = dagColumns(tasks);
        expect(columns.flat().sort()).toEqual(tasks.map((task) => task.id).sort());
        const columnOf = new Map(columns.flatMap((ids, column) => ids.map((id) => [id, column] as const)));
        for (const task of tasks) for (const parent of task.dependentTasks) expect(columnOf.get(parent)!).toBeLessThan(columnOf.get(task.id)!);
      }),
    );
  });

  it('draws an edge from each parent to each child task, left to right, inside the drawing', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat(), { maxLength: 3 }), { maxLength: 12 }), (parents) => {
        const tasks = parents.map((picks, index) => ({ id: `t${index}`, dependentTasks: index === 0 ? [] : picks.map((pick) => `t${pick % index}`) }));
        const layout = graphLayout(tasks);
        const wanted = tasks.flatMap((task) => [...new Set(task.dependentTasks)].map((parent) => `${parent}→${task.id}`)).sort();
        expect(layout.edges.map((edge) => `${edge.from}→${edge.to}`).sort()).toEqual(wanted);
        const at = new Map(layout.tasks.map((task) => [task.id, task]));
        for (const edge of layout.edges) expect(at.get(edge.from)!.x).toBeLessThan(at.get(edge.to)!.x);
        for (const box of layout.tasks) {
          expect(box.x + layout.boxWidth).toBeLessThanOrEqual(layout.width);
          expect(box.y + layout.boxHeight).toBeLessThanOrEqual(layout.height);
        }
        // No two boxes overlap.
        expect(new Set(layout.tasks.map((box) => `${box.x},${box.y}`)).size).toBe(tasks.length);
      }),
    );
  });
});
