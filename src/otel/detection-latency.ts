import { type NodeTimes, serviceNodeTimes } from '../domain/node-times.js';
import type { OutputNode } from '../domain/model.js';

/**
 * How late a run saw its nodes move. The service reports when a task node started and ended
 * (`startTime`, `endTime` of its output, service.md §4.2); the run saw each transition when a read
 * showed it (its `node` event, timed on the client's scheduler). The difference is the detection
 * latency: what polling costs in freshness. Both times must be on one clock — the service's and the
 * client's, which for a client on real time is only as true as the two clocks agree — so a
 * transition seen before the service says it happened (clock skew) is left out, not counted as 0.
 */

/**
 * When the run saw a node start executing and end, on the client's scheduler.
 *
 * @example
 * ```ts
 * const seen: SeenTransitions = { startedAt: 1_200, endedAt: 5_400 };
 * ```
 */
export type SeenTransitions = NodeTimes;

/**
 * One measured latency.
 *
 * @example
 * ```ts
 * const latency: DetectionLatency = { nodeId: 'node-1', transition: 'end', ms: 420 };
 * ```
 */
export interface DetectionLatency {
  readonly nodeId: string;
  readonly transition: 'start' | 'end';
  readonly ms: number;
}

/**
 * The detection latencies of a run's task nodes: for each node with both a service time and a time
 * the run saw it, `seen − reported`, when not negative.
 *
 * @example
 * ```ts
 * detectionLatencies(new Map([['node-1', { endedAt: 1_500 }]]), [{ nodeId: 'node-1', endTime: new Date(1_000).toISOString(), … }]);
 * // [{ nodeId: 'node-1', transition: 'end', ms: 500 }]
 * ```
 */
export function detectionLatencies(seen: ReadonlyMap<string, SeenTransitions>, output: readonly Pick<OutputNode, 'nodeId' | 'startTime' | 'endTime'>[]): DetectionLatency[] {
  const latencies: DetectionLatency[] = [];
  for (const node of output) {
    const saw = seen.get(node.nodeId);
    if (saw === undefined) continue;
    const reported = serviceNodeTimes(node);
    const start = latency(saw.startedAt, reported.startedAt);
    if (start !== undefined) latencies.push({ nodeId: node.nodeId, transition: 'start', ms: start });
    const end = latency(saw.endedAt, reported.endedAt);
    if (end !== undefined) latencies.push({ nodeId: node.nodeId, transition: 'end', ms: end });
  }
  return latencies;
}

function latency(seenAt: number | undefined, reportedAt: number | undefined): number | undefined {
  if (seenAt === undefined || reportedAt === undefined || seenAt < reportedAt) return undefined;
  return seenAt - reportedAt;
}
