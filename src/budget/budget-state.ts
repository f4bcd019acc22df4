import type { RequestPriority } from '../domain/endpoints.js';
import type { KeyCadence } from './key-cadence.js';
import { budgetReadyAt } from './scheduler.js';
import { queueDepths } from './scheduler-state.js';
import type { SchedulerState, ServerView } from './scheduler-state.js';
import { sendsWithin } from './send-log.js';

/**
 * What the budget looks like at one moment, for UIs and logs. Plain data (JSON-serialisable): times
 * are in ms on the client's scheduler (`Date.now()` by default, emulator time on `emulator.scheduler`).
 *
 * @example
 * ```ts
 * budget.state$.subscribe((s) => console.log(`${s.usedThisMinute}/${s.limitPerMinute}, ${s.queued.total} waiting`));
 * ```
 */
export interface BudgetState {
  /** When the snapshot was taken. */
  readonly at: number;
  readonly limitPerMinute: number;
  readonly limitPerDay: number;
  /** Our requests in the last 60 s (the service's window length, PROTOCOL §2.1). */
  readonly usedThisMinute: number;
  /** What the limit leaves of it, by our count. */
  readonly remainingThisMinute: number;
  /** Our requests in the last 24 h. */
  readonly usedToday: number;
  readonly remainingToday: number;
  /** The service's own count, from the last answer's headers (it includes other processes on the account). */
  readonly server: ServerView;
  /** Requests let through whose answer has not come yet. */
  readonly inFlight: number;
  readonly queued: { readonly total: number; readonly byPriority: Readonly<Record<RequestPriority, number>> };
  /** Set while a 429 holds everything back. */
  readonly pausedUntil?: number;
  /** True while the service's headers show someone else using the account and we slow down for it. */
  readonly followingServer: boolean;
  /** When the budget as a whole lets the next request go; equal to `at` when one may go now. */
  readonly nextSendAt: number;
  /** Per key (execution id): the polls the budget actually let through. */
  readonly cadences: Readonly<Record<string, KeyCadence>>;
}

/**
 * The public view of a scheduler state at `now`.
 *
 * @example
 * ```ts
 * const snapshot = budgetState(state, clock.now());
 * ```
 */
export function budgetState(state: SchedulerState, now: number): BudgetState {
  const { limits } = state;
  const usedThisMinute = sendsWithin(state.sends, now, limits.serviceMinuteMs);
  const usedToday = sendsWithin(state.sends, now, limits.serviceDayMs);
  const followingServer = isActive(state.minuteCap, now) || isActive(state.dayCap, now);
  return {
    at: now,
    limitPerMinute: limits.perMinute,
    limitPerDay: limits.perDay,
    usedThisMinute,
    remainingThisMinute: Math.max(0, limits.perMinute - usedThisMinute),
    usedToday,
    remainingToday: Math.max(0, limits.perDay - usedToday),
    server: state.server,
    inFlight: state.inFlight.length,
    queued: { total: state.queue.length, byPriority: queueDepths(state.queue) },
    ...(state.pausedUntil > now ? { pausedUntil: state.pausedUntil } : {}),
    followingServer,
    nextSendAt: Math.max(now, budgetReadyAt(state, now)),
    cadences: Object.fromEntries(state.cadences),
  };
}

function isActive(cap: { readonly until: number } | undefined, now: number): boolean {
  return cap !== undefined && now < cap.until;
}
