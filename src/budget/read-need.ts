import type { ReadNeed } from '../domain/budget.js';

export type { ReadNeed };

/*
 * When a run's read goes, written once: the budget's reads class applies it to every registered need,
 * and a run without a budget times its own reads by the same `readDueAt`.
 *
 * A read becomes due at the run's wish, within its bounds. When the account can give more (`fairMs`,
 * one read per run per that interval spends the pace the account allows, is shorter than the wish), a
 * run whose change is as likely at any time reads at its share — never faster than the service's own
 * 2 s loop. Once due, it waits its turn in the reads class: round-robin by run (fair-queue.ts), a read
 * whose change is not yet likely deferred by up to `MAX_DEFER_ROUNDS` turns, and a read certain to find
 * a change goes first — once per turn of the round-robin, so that it spends the run's own turn.
 */

/** service.md §6: the service's own tool reads every 2 s; spare budget never polls a quiet run faster. */
export const FAIR_FLOOR_MS = 2_000;

/**
 * service.md §3.2, §3.3: a child starts, and a finished execution says so, on the service's next tick,
 * within this long of what the run saw.
 */
export const SERVICE_TICK_MS = 1_500;

/**
 * The most turns of the round-robin a read is put back because its change is not yet likely: no run
 * waits more than `MAX_DEFER_ROUNDS + 1` turns once its read is due, whatever its model says.
 */
export const MAX_DEFER_ROUNDS = 2;

/**
 * When the need's read is due: the run's wish within its bounds, and for a flat model no later than
 * its fair share `fairMs` of the account when that is shorter (`undefined`: no account, the wish alone).
 * A certain read that would go ahead of others waiting (`crowded`) is due once the tick that makes it
 * certain has passed, within its maximum gap: it must not take their place early and find nothing.
 *
 * @example
 * ```ts
 * readDueAt({ since: 0, minMs: 500, wishMs: 10_000, maxMs: 10_000 }, 6_316); // 6_316: the budget is loose
 * ```
 */
export function readDueAt(need: ReadNeed, fairMs: number | undefined, crowded = false): number {
  const { since, minMs, maxMs } = need;
  const wishMs = Math.min(Math.max(minMs, maxMs), Math.max(minMs, need.wishMs));
  if (need.certain === true) return since + (crowded ? Math.max(wishMs, Math.min(maxMs, SERVICE_TICK_MS)) : wishMs);
  const flat = need.likelyAt === undefined;
  const shareMs = flat && fairMs !== undefined && fairMs > 0 ? Math.max(minMs, FAIR_FLOOR_MS, fairMs) : Number.POSITIVE_INFINITY;
  return since + Math.min(wishMs, shareMs);
}

/**
 * How many turns of the round-robin (`fairMs` each) the read is put back: the time from its due moment
 * until its change has become likely, at most `MAX_DEFER_ROUNDS`; 0 for a flat model or a certain read.
 *
 * @example
 * ```ts
 * readDeferral({ since: 0, minMs: 500, wishMs: 2_000, maxMs: 10_000, likelyAt: 32_000 }, 2_000, 20_000); // 1.5
 * ```
 */
export function readDeferral(need: ReadNeed, dueAt: number, fairMs: number | undefined): number {
  if (need.likelyAt === undefined || need.certain === true || fairMs === undefined || !(fairMs > 0)) return 0;
  return Math.min(MAX_DEFER_ROUNDS, Math.max(0, (need.likelyAt - dueAt) / fairMs));
}
