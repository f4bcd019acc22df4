import type { NodeStatus, OutputNode } from './model.js';

/** A node that will not change any more: `finish` or `failed` (service.md §3.2). */
export function isNodeDone(status: NodeStatus): boolean {
  return status === 'finish' || status === 'failed';
}

/**
 * When a node started and ended, in ms on one clock: the service's (ms since the epoch, from an
 * output node's `startTime` and `endTime`, service.md §4.2) or a run's scheduler (when a read saw it).
 * A time not known is absent.
 */
export interface NodeTimes {
  readonly startedAt?: number;
  readonly endedAt?: number;
}

/** A service timestamp (ISO 8601) in ms since the epoch; `undefined` when absent or not a time. */
export function serviceInstant(timestamp: string | undefined): number | undefined {
  if (timestamp === undefined) return undefined;
  const ms = Date.parse(timestamp);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The service's times of an output node (service.md §4.2): the one place they are parsed. */
export function serviceNodeTimes(node: Pick<OutputNode, 'startTime' | 'endTime'>): NodeTimes {
  const startedAt = serviceInstant(node.startTime);
  const endedAt = serviceInstant(node.endTime);
  return { ...(startedAt === undefined ? {} : { startedAt }), ...(endedAt === undefined ? {} : { endedAt }) };
}

/** service.md §3.6: the service stops an execution after 30 minutes, so no node runs longer. */
export const LONGEST_NODE_MS = 30 * 60_000;

/** How long a node ran by its times, when both are known and in order. */
export function durationOf(times: NodeTimes): number | undefined {
  const { startedAt, endedAt } = times;
  if (startedAt === undefined || endedAt === undefined || endedAt < startedAt) return undefined;
  return endedAt - startedAt;
}

/**
 * A node's times as a run saw them, after it saw a `node` event of the node at `at` (on its
 * scheduler): the one rule for when a node was seen starting and ending. The node started when it was
 * first seen `executing`, and ended when it was first seen done (`finish` or `failed`), whether or not
 * its start was seen: one that went from `init` to done between two reads was seen ending then, and its
 * start is not guessed. Nodes only move on (service.md §3.2); should one be seen `executing` again after
 * an end but no start, it is running, and that end is dropped, so a start never follows its end.
 * Returns `times` itself when the event changes nothing.
 */
export function seeNodeEvent(times: NodeTimes | undefined, event: { readonly status: NodeStatus }, at: number): NodeTimes | undefined {
  if (event.status === 'executing') return times?.startedAt === undefined ? { startedAt: at } : times;
  if (isNodeDone(event.status) && times?.endedAt === undefined) return { ...times, endedAt: at };
  return times;
}
