import type { NodeFate, Timeline } from './timeline.js';

/** Node statuses the emulator produces (`waiting` never occurs on the service, service.md §3.1). */
export type NodeStatus = 'init' | 'executing' | 'finish' | 'failed';

/** Execution statuses the emulator produces (`init` never occurs on the service, service.md §3.1). */
export type ExecutionStatus = 'executing' | 'finish' | 'failed';

/** A node as seen at one instant. */
export interface NodeState {
  readonly status: NodeStatus;
  readonly startAt: number | undefined;
  readonly endAt: number | undefined;
  /** Set once the node has ended (task nodes only). */
  readonly errorMessage: string | undefined;
}

const NOT_STARTED: NodeState = { status: 'init', startAt: undefined, endAt: undefined, errorMessage: undefined };

/** The state of a node at emulator time `at`. */
export function nodeStateAt(fate: NodeFate, at: number): NodeState {
  if (fate.outcome === 'blocked') return NOT_STARTED;
  if (at >= fate.endAt) return { status: fate.outcome, startAt: fate.startAt, endAt: fate.endAt, errorMessage: fate.errorMessage };
  if (fate.startAt !== undefined && at >= fate.startAt) return { status: 'executing', startAt: fate.startAt, endAt: undefined, errorMessage: undefined };
  return NOT_STARTED;
}

/** The execution status at emulator time `at` (service.md §3.3). */
export function executionStatusAt(timeline: Timeline, at: number): ExecutionStatus {
  return at >= timeline.settledAt ? timeline.outcome : 'executing';
}
