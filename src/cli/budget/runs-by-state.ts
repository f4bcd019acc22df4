import type { ExecutionStatus } from '../../domain/model.js';

/** An execution's status as a hub last stored it, or `unread` while it has stored none yet. */
export type FollowedStatus = ExecutionStatus | 'unread';

/** The executions a fleet follows through its Redis run hub, counted by status. */
export interface RunsByState {
  /**
   * How many are at each status. An aborted execution reads `failed` (the service has no aborted
   * status); a finished or failed one counts until the hub's keys of it expire.
   */
  readonly counts: Readonly<Record<FollowedStatus, number>>;
  /** True when the read stopped at its bound: there are at least these many. */
  readonly atLeast: boolean;
}

const STATUSES: ReadonlySet<string> = new Set<ExecutionStatus>(['init', 'executing', 'finish', 'failed', 'unknown']);

/** The status in a stored `RunState`'s JSON; one that cannot be read is `unknown`, none yet `unread`. */
function statusOf(state: string | undefined): FollowedStatus {
  if (state === undefined || state === '') return 'unread';
  let parsed: unknown;
  try {
    parsed = JSON.parse(state);
  } catch {
    return 'unknown';
  }
  if (typeof parsed !== 'object' || parsed === null) return 'unknown';
  const { status } = parsed as { status?: unknown };
  if (status === undefined) return 'unread';
  return typeof status === 'string' && STATUSES.has(status) ? (status as ExecutionStatus) : 'unknown';
}

/**
 * Counts followed executions by status from the `RunState` JSON each one's hub stored (`undefined`
 * while it stored none). `complete` is false when the read stopped before it saw every execution.
 * `null` when the read saw them all and there is none: the fleet follows nothing through a Redis run hub.
 *
 * @example
 * ```ts
 * runsByState(['{"status":"executing","nodes":[]}', undefined], true);
 * // { counts: { init: 0, executing: 1, finish: 0, failed: 0, unknown: 0, unread: 1 }, atLeast: false }
 * ```
 */
export function runsByState(states: readonly (string | undefined)[], complete: boolean): RunsByState | null {
  if (states.length === 0 && complete) return null;
  const counts: Record<FollowedStatus, number> = { init: 0, executing: 0, finish: 0, failed: 0, unknown: 0, unread: 0 };
  for (const state of states) counts[statusOf(state)] += 1;
  return { counts, atLeast: !complete };
}
