import type { OutputNode } from '../domain/model.js';
import type { RunEvent } from './events.js';
import { isNodeDone } from './node-progress.js';
import type { RunState } from './run-state.js';

/** When a run saw a node start and end, in ms on the run's scheduler. */
export interface ObservedTimes {
  readonly startedAt?: number;
  readonly endedAt?: number;
}

/** The observed times of every node seen executing, by node id. */
export type NodeTimes = Map<string, ObservedTimes>;

/**
 * Notes in `times` the transitions an event shows at `now`: a node first seen `executing` started
 * then; one of those first seen done ended then. A node first seen done, or that jumped from `init` to
 * done between two reads, has no observed start: its time is not guessed.
 */
export function observeTimes(times: NodeTimes, event: RunEvent, now: number): void {
  if (event.type !== 'node') return;
  const known = times.get(event.nodeId);
  if (event.status === 'executing' && known?.startedAt === undefined) times.set(event.nodeId, { startedAt: now });
  else if (isNodeDone(event.status) && known?.startedAt !== undefined && known.endedAt === undefined) times.set(event.nodeId, { ...known, endedAt: now });
}

/** The service's own times of a node (service.md §4.2), when it gave both and they make sense. */
function reportedElapsed(node: OutputNode | undefined): number | undefined {
  if (node?.startTime === undefined || node.endTime === undefined) return undefined;
  const elapsed = Date.parse(node.endTime) - Date.parse(node.startTime);
  return Number.isFinite(elapsed) && elapsed >= 0 ? elapsed : undefined;
}

function nodeElapsed(reported: OutputNode | undefined, observed: ObservedTimes | undefined, now: number): number | undefined {
  const elapsed = reportedElapsed(reported);
  if (elapsed !== undefined) return elapsed;
  if (observed?.startedAt === undefined) return undefined;
  return (observed.endedAt ?? now) - observed.startedAt;
}

/**
 * The state with its times at `now`: each node's `elapsedMs` (the service's times once the result
 * has them, else the observed ones; a running node's grows with `now`) and the run's, since
 * `subscribedAt`.
 */
export function withElapsed(state: RunState, times: NodeTimes, now: number, subscribedAt: number): RunState {
  const reported = new Map(state.result?.output.map((entry) => [entry.nodeId, entry]));
  // `state` comes from `RunStateFold`, which leaves times out: nothing stale to drop.
  const nodes = state.nodes.map((node) => {
    const elapsedMs = nodeElapsed(reported.get(node.nodeId), times.get(node.nodeId), now);
    return elapsedMs === undefined ? node : { ...node, elapsedMs };
  });
  return { ...state, nodes, elapsedMs: now - subscribedAt };
}
