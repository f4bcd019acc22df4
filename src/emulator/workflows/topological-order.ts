/** A node as far as ordering is concerned. */
export interface GraphNode {
  readonly id: string;
  readonly parents: readonly string[];
}

/**
 * Orders nodes parents before children, ties broken by id (service.md §4.1). Returns the ids of the
 * nodes caught in a cycle instead when there is one.
 */
export function topologicalOrder<N extends GraphNode>(
  nodes: readonly N[],
): { readonly ok: true; readonly order: readonly N[] } | { readonly ok: false; readonly cycle: readonly string[] } {
  const waitingOn = new Map(nodes.map((node) => [node.id, new Set(node.parents)]));
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const order: N[] = [];
  let ready = nodes.filter((node) => node.parents.length === 0).map((node) => node.id);
  while (ready.length > 0) {
    ready.sort();
    const [next, ...rest] = ready;
    ready = rest;
    if (next === undefined) break;
    const node = byId.get(next);
    if (node === undefined) continue;
    order.push(node);
    waitingOn.delete(next);
    for (const [id, parents] of waitingOn) {
      if (parents.delete(next) && parents.size === 0) ready.push(id);
    }
  }
  if (order.length === nodes.length) return { ok: true, order };
  return { ok: false, cycle: [...waitingOn.keys()].sort() };
}
