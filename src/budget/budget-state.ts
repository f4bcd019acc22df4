import type { BudgetState, DayView } from '../domain/budget.js';
import { accountLimits, dayBucketAt, dayBucketEmptyAt, FULL_DAY_BUCKET, pacedRemaining, readyAt, sentWithin } from './account-rules.js';
import type { AccountConfig, AccountRecord } from './account-rules.js';
import type { BudgetCore, KeyCadence } from './scheduler.js';

export type { BudgetState, DayView };

const HOUR_MS = 3_600_000;

/**
 * What one process shows of the budget besides the account: its requests in flight, its queue and
 * the polls it let through per key.
 *
 * @example
 * ```ts
 * const local: LocalView = { inFlight: 0, queued: { total: 0, byPriority: core.queue.depths() }, cadences: {} };
 * ```
 */
export interface LocalView {
  readonly inFlight: number;
  readonly queued: BudgetState['queued'];
  readonly cadences: Readonly<Record<string, KeyCadence>>;
}

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
  return accountState(account.record, account.config, now, {
    inFlight: account.inFlight.size,
    queued: { total: core.queue.size, byPriority: core.queue.depths() },
    cadences: core.cadences.record(),
  });
}

/**
 * The public view of an account's record at `now`, with one process's own figures: the same for a
 * budget in memory and one shared through Redis.
 *
 * @example
 * ```ts
 * const state = accountState(record, config, now, local);
 * ```
 */
export function accountState(record: AccountRecord, config: AccountConfig, now: number, local: LocalView): BudgetState {
  const limits = accountLimits(record, config);
  const usedThisMinute = sentWithin(record, now, limits.serviceMinuteMs, config);
  const usedToday = sentWithin(record, now, limits.serviceDayMs, config);
  return {
    at: now,
    limitPerMinute: limits.perMinute,
    limitPerDay: limits.perDay,
    usedThisMinute,
    remainingThisMinute: Math.max(0, limits.perMinute - usedThisMinute),
    usedToday,
    remainingToday: Math.max(0, limits.perDay - usedToday),
    day: dayView(record, config, usedToday, now),
    server: record.server,
    inFlight: local.inFlight,
    queued: local.queued,
    ...(record.pausedUntil > now ? { pausedUntil: record.pausedUntil } : {}),
    followingServer: isActive(record.minuteCap, now) || isActive(record.dayCap, now),
    nextSendAt: Math.max(now, readyAt(record, 'reads', now, config)),
    cadences: local.cadences,
  };
}

function dayView(record: AccountRecord, config: AccountConfig, used: number, now: number): DayView {
  const limits = accountLimits(record, config);
  const dayCap = record.dayCap !== null && now < record.dayCap.until ? record.dayCap : undefined;
  const ourRemaining = limits.perDay - sentWithin(record, now, limits.dayWindowMs, config);
  const remaining = Math.max(0, Math.min(ourRemaining, dayCap?.hardAllowance ?? Number.POSITIVE_INFINITY));
  const bucket = dayBucketAt(record.dayBucket ?? FULL_DAY_BUCKET, now, limits);
  const exhaustedAt = dayBucketEmptyAt(record.dayBucket ?? FULL_DAY_BUCKET, now, sentWithin(record, now, HOUR_MS, config), limits);
  return {
    used,
    remaining,
    reserve: limits.dayReserve,
    burst: Math.max(0, Math.floor(Math.min(bucket.tokens, pacedRemaining(record, now, config)))),
    // As of the last send, departure or answer: the bucket's refill.
    sustainablePerMinute: bucket.perMs * 60_000,
    ...(exhaustedAt === undefined ? {} : { exhaustedAt }),
  };
}

function isActive(cap: { readonly until: number } | null, now: number): boolean {
  return cap !== null && now < cap.until;
}
