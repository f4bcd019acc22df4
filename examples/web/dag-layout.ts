/** A task of the plan, as the layout needs it (service.md §5.2: `dependentTasks` are task→task edges). */
export interface DagTask {
  readonly id: string;
  readonly dependentTasks: readonly string[];
}

/**
 * Lays the plan's tasks out by their dependencies: column k holds the tasks whose longest chain of
 * parents has k links, in plan order, so every edge points to a later column. Parents that are not
 * tasks of the plan are ignored; a cycle (which a plan cannot have) is broken where it is met.
 *
 * @example
 * ```ts
 * dagColumns([{ id: 'a', dependentTasks: [] }, { id: 'b', dependentTasks: ['a'] }]); // [['a'], ['b']]
 * ```
 */
export function dagColumns(tasks: readonly DagTask[]): string[][] {
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const parents = (byId.get(id)?.dependentTasks ?? []).filter((parent) => byId.has(parent));
    const value = parents.length === 0 ? 0 : 1 + Math.max(...parents.map(depthOf));
    visiting.delete(id);
    depth.set(id, value);
    return value;
  };
  const columns: string[][] = [];
  for (const task of tasks) {
    const column = depthOf(task.id);
    (columns[column] ??= []).push(task.id);
  }
  return columns.filter((column) => column.length > 0);
}
