import type { OutputNode, RunResult } from '../domain/model.js';
import type { RunEvent } from './events.js';
import { isNodeDone } from './node-progress.js';
import type { NodeState, RunState } from './run-state.js';

/** When a run saw a node start and end, in ms on the run's scheduler. */
export interface ObservedTimes {
  readonly startedAt?: number;
  readonly endedAt?: number;
}

/** The observed times of every node seen executing, by node id. */
export type NodeTimes = ReadonlyMap<string, ObservedTimes>;

/**
 * Notes the transitions an event shows at `now`: a node first seen `executing` started then; one of
 * those first seen done ended then. A node first seen done, or that jumped from `init` to done between
 * two reads, has no observed start: its time is not guessed.
 */
export function observeTimes(times: NodeTimes, event: RunEvent, now: number): NodeTimes {
  if (event.type !== 'node') return times;
  const known = times.get(event.nodeId);
  if (event.status === 'executing' && known?.startedAt === undefined) {
    return new Map(times).set(event.nodeId, { startedAt: now });
  }
  if (isNodeDone(event.status) && known?.startedAt !== undefined && known.endedAt === undefined) {
    return new Map(times).set(event.nodeId, { ...known, endedAt: now });
  }
  return times;
}

/** The service's own times of a node (service.md §4.2), when it gave both and they make sense. */
function reportedElapsed(node: OutputNode | undefined): number | undefined {
  if (node?.startTime === undefined || node.endTime === undefined) return undefined;
  const elapsed = Date.parse(node.endTime) - Date.parse(node.startTime);
  return Number.isFinite(elapsed) && elapsed >= 0 ? elapsed : undefined;
}

function nodeElapsed(node: NodeState, observed: ObservedTimes | undefined, result: RunResult | undefined, now: number): number | undefined {
  const reported = reportedElapsed(result?.output.find((entry) => entry.nodeId === node.nodeId));
  if (reported !== undefined) return reported;
  if (observed?.startedAt === undefined) return undefined;
  return (observed.endedAt ?? now) - observed.startedAt;
}

/**
 * The state with its times at `now`: each node's `elapsedMs` (the service's times once the result
 * has them, else the observed ones; a running node's grows with `now`) and the run's, since
 * `subscribedAt`.
 */
export function withElapsed(state: RunState, times: NodeTimes, now: number, subscribedAt: number): RunState {
  // `state` comes from `reduceRunState`, which leaves times out: nothing stale to drop.
  const nodes = state.nodes.map((node) => {
    const elapsedMs = nodeElapsed(node, times.get(node.nodeId), state.result, now);
    return elapsedMs === undefined ? node : { ...node, elapsedMs };
  });
  return { ...state, nodes, elapsedMs: now - subscribedAt };
}
