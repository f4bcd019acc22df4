import type { RunState } from '../../src/index.js';
import type { DagTask } from './dag-layout.js';

/** When a node ran, in ms from the run's start: `ended` once it did. */
export interface NodeSpan {
  readonly startMs: number;
  readonly endMs: number;
  readonly ended: boolean;
}

/**
 * The timeline's spans: a node that has started begins when the last of its parents ended (a root at
 * 0) and lasts its `elapsedMs`. Built from the nodes' own times only, so the chart keeps the service's
 * proportions whatever the clock of the page (or of an accelerated emulator); a node not started yet has no span.
 *
 * @example
 * ```ts
 * const spans = nodeSpans(plan.tasks, state); // spans.get('node-chart') → { startMs: 5000, endMs: 9000, ended: true }
 * ```
 */
export function nodeSpans(tasks: readonly DagTask[], state: RunState): Map<string, NodeSpan> {
  const nodes = new Map(state.nodes.map((node) => [node.nodeId, node]));
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const spans = new Map<string, NodeSpan>();
  const visiting = new Set<string>();
  const endOf = (id: string): number => spanOf(id)?.endMs ?? 0;
  function spanOf(id: string): NodeSpan | undefined {
    const known = spans.get(id);
    if (known !== undefined || visiting.has(id)) return known;
    const node = nodes.get(id);
    const started = node !== undefined && (node.status === 'executing' || node.status === 'finish' || node.status === 'failed') && node.task;
    if (!started) return undefined;
    visiting.add(id);
    const parents = (byId.get(id)?.dependentTasks ?? []).filter((parent) => byId.has(parent));
    const startMs = Math.max(0, ...parents.map(endOf));
    visiting.delete(id);
    const span = { startMs, endMs: startMs + (node.elapsedMs ?? 0), ended: node.status !== 'executing' };
    spans.set(id, span);
    return span;
  }
  for (const task of tasks) spanOf(task.id);
  return spans;
}
