import type { BudgetLimits } from './limits.js';

/**
 * The smooth pacer: a GCRA (generic cell rate algorithm), the token bucket written as one number, the
 * theoretical arrival time `tat` of the next send at the steady pace. Why its numbers can never cause
 * a 429 is worked out on `budgetLimits`.
 *
 * @example
 * ```ts
 * let tat = IDLE_PACER;
 * if (pacerReadyAt(tat, limits) <= now) tat = pacerAfterSend(tat, now, limits);
 * ```
 */
export type Pacer = number;

/**
 * A pacer that has never sent: its full burst is available.
 *
 * @example
 * ```ts
 * pacerReadyAt(IDLE_PACER, limits); // -Infinity: send at once
 * ```
 */
export const IDLE_PACER: Pacer = Number.NEGATIVE_INFINITY;

/**
 * When the next send conforms: `burst − 1` intervals before the theoretical arrival time.
 *
 * @example
 * ```ts
 * const wait = Math.max(0, pacerReadyAt(tat, limits) - now);
 * ```
 */
export function pacerReadyAt(tat: Pacer, limits: BudgetLimits): number {
  return tat - (limits.burst - 1) * limits.pacingIntervalMs;
}

/**
 * The pacer after a send at `now`. `tat` only ever grows, which the proof on `budgetLimits` relies on.
 *
 * @example
 * ```ts
 * tat = pacerAfterSend(tat, now, limits);
 * ```
 */
export function pacerAfterSend(tat: Pacer, now: number, limits: BudgetLimits): Pacer {
  return Math.max(tat, now) + limits.pacingIntervalMs;
}

/**
 * The pacer restarting at `resumeAt` with an empty bucket: one send at `resumeAt`, then one per
 * interval, so the end of a pause (a 429) is not followed by a burst.
 *
 * @example
 * ```ts
 * tat = pacerResumingAt(tat, pausedUntil, limits);
 * ```
 */
export function pacerResumingAt(tat: Pacer, resumeAt: number, limits: BudgetLimits): Pacer {
  return Math.max(tat, resumeAt + (limits.burst - 1) * limits.pacingIntervalMs);
}
