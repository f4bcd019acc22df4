import type { BudgetState, DayView } from '../domain/budget.js';
import type { AccountState } from './account-state.js';
import { dayBucketAt, dayBucketEmptyAt } from './day-pacing.js';
import type { BudgetCore } from './scheduler.js';

export type { BudgetState, DayView };

const HOUR_MS = 3_600_000;

/**
 * The public view of the budget at `now`. Built on demand, in O(log n): counts come from the send
 * log, depths from counters, and the per-run cadences are rebuilt only after they changed.
 *
 * @example
 * ```ts
 * const snapshot = budgetState(core, clock.now());
 * ```
 */
export function budgetState(core: BudgetCore, now: number): BudgetState {
  const { account } = core;
  const { limits, sends } = account;
  const usedThisMinute = sends.within(now, limits.serviceMinuteMs);
  const usedToday = sends.within(now, limits.serviceDayMs);
  const depths = core.queue.depths();
  return {
    at: now,
    limitPerMinute: limits.perMinute,
    limitPerDay: limits.perDay,
    usedThisMinute,
    remainingThisMinute: Math.max(0, limits.perMinute - usedThisMinute),
    usedToday,
    remainingToday: Math.max(0, limits.perDay - usedToday),
    day: dayView(account, usedToday, now),
    server: account.server,
    inFlight: account.inFlight.size,
    queued: { total: core.queue.size, byPriority: depths },
    ...(account.pausedUntil > now ? { pausedUntil: account.pausedUntil } : {}),
    followingServer: isActive(account.minuteCap, now) || isActive(account.dayCap, now),
    nextSendAt: Math.max(now, account.readyAt('reads', now)),
    cadences: core.cadences.record(),
  };
}

function dayView(account: AccountState, used: number, now: number): DayView {
  const { limits, sends } = account;
  const dayCap = account.dayCap !== undefined && now < account.dayCap.until ? account.dayCap : undefined;
  const ourRemaining = limits.perDay - sends.within(now, limits.dayWindowMs);
  const remaining = Math.max(0, Math.min(ourRemaining, dayCap?.hardAllowance ?? Number.POSITIVE_INFINITY));
  const bucket = dayBucketAt(account.dayBucket, now, limits);
  const exhaustedAt = dayBucketEmptyAt(account.dayBucket, now, sends.within(now, HOUR_MS), limits);
  return {
    used,
    remaining,
    reserve: limits.dayReserve,
    burst: Math.max(0, Math.floor(Math.min(bucket.tokens, account.pacedRemaining(now)))),
    // As of the last send, departure or answer: the bucket's refill.
    sustainablePerMinute: bucket.perMs * 60_000,
    ...(exhaustedAt === undefined ? {} : { exhaustedAt }),
  };
}

function isActive(cap: { readonly until: number } | undefined, now: number): boolean {
  return cap !== undefined && now < cap.until;
}
