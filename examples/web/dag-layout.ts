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

/** Where a box of the graph stands, in the drawing's units (its top-left corner). */
export interface PlacedTask {
  readonly id: string;
  readonly column: number;
  readonly x: number;
  readonly y: number;
}

/** An edge from a parent's right side to a child's left side, as an SVG path. */
export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly path: string;
}

/** The graph drawn: every task's box, every task→task edge, and the drawing's size. */
export interface GraphLayout {
  readonly width: number;
  readonly height: number;
  readonly boxWidth: number;
  readonly boxHeight: number;
  readonly tasks: readonly PlacedTask[];
  readonly edges: readonly GraphEdge[];
}

const BOX = { width: 176, height: 52, columnGap: 56, rowGap: 14 } as const;

/**
 * The plan drawn as a graph: tasks in the columns of {@link dagColumns}, top to bottom in each, and
 * an edge (a smooth curve) from each parent to each child that is a task of the plan.
 *
 * @example
 * ```ts
 * const { tasks, edges, width, height } = graphLayout(plan.tasks); // boxes at tasks[i].x, .y; edges[j].path for <path d>
 * ```
 */
export function graphLayout(tasks: readonly DagTask[]): GraphLayout {
  const columns = dagColumns(tasks);
  const placed = columns.flatMap((ids, column) =>
    ids.map((id, row) => ({ id, column, x: column * (BOX.width + BOX.columnGap), y: row * (BOX.height + BOX.rowGap) })),
  );
  const at = new Map(placed.map((task) => [task.id, task]));
  const edges: GraphEdge[] = [];
  for (const task of tasks) {
    const child = at.get(task.id);
    for (const parentId of new Set(task.dependentTasks)) {
      const parent = at.get(parentId);
      if (parent === undefined || child === undefined || parent.column >= child.column) continue;
      const [x1, y1, x2, y2] = [parent.x + BOX.width, parent.y + BOX.height / 2, child.x, child.y + BOX.height / 2];
      const bend = (x2 - x1) / 2;
      edges.push({ from: parentId, to: task.id, path: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}` });
    }
  }
  const rows = Math.max(0, ...columns.map((ids) => ids.length));
  return {
    width: Math.max(0, columns.length * (BOX.width + BOX.columnGap) - BOX.columnGap),
    height: Math.max(0, rows * (BOX.height + BOX.rowGap) - BOX.rowGap),
    boxWidth: BOX.width,
    boxHeight: BOX.height,
    tasks: placed,
    edges,
  };
}
