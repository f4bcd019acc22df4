import fc from 'fast-check';
import type { ExecutionStatus, NodeStatus } from '../../src/domain/model.js';

// service.md §3.2, §3.3, §4.1, §4.2: task nodes move forward on their own timelines; the execution is
// `failed` as soon as one fails while the others go on; the status lists every node, the output the tasks.

/** A task node's life: it starts at `startAt`, ends at `endAt` (`failed` or `finish`), in service steps. */
export interface Life {
  readonly startAt: number;
  readonly endAt: number;
  readonly fails: boolean;
}

export const life = fc.record({ startAt: fc.integer({ min: 0, max: 6 }), length: fc.integer({ min: 0, max: 6 }), fails: fc.boolean() }).map(({ startAt, length, fails }): Life => ({ startAt, endAt: startAt + length, fails }));

export function statusAt(task: Life, step: number): NodeStatus {
  if (step < task.startAt) return 'init';
  if (step < task.endAt) return 'executing';
  return task.fails ? 'failed' : 'finish';
}

export function executionAt(statuses: readonly NodeStatus[]): ExecutionStatus {
  if (statuses.includes('failed')) return 'failed';
  return statuses.every((status) => status === 'finish') ? 'finish' : 'executing';
}

/** Run options of the property tests over task lives: a fixed jitter, fast bounds. */
export const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 400 } };
