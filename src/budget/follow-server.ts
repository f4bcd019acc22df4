import type { GateReport } from '../http/gate.js';
import { markStart } from './duplicate-starts.js';
import { pacerResumingAt } from './pacing.js';
import type { SchedulerState, ServerView } from './scheduler-state.js';
import { sendsWithin } from './send-log.js';
import { serverCap } from './server-cap.js';

/**
 * The state after an attempt's report arrives at `now`: one request fewer on its way, the
 * identical-start mark moved to the answer, and what the service said about its count applied.
 *
 * - `X-RateLimit-Remaining-RPM` / `-Daily` lower than our own sends explain means someone else uses
 *   the account (PROTOCOL §2.1): a cap spreads what is left over the time until the service's window
 *   can have reset (per day: only stops at zero, a day being too long to spread over). A later report
 *   that no longer shows a gap lifts the cap: the latest answer is the freshest count.
 * - A 429 pauses everything. The account's window that refused us started at or before the request
 *   arrived, so it has reset within 60 s of the answer; we wait our longer window (60 s + latency
 *   allowance) from the answer, or the throttler's `Retry-After` (PROTOCOL §1.3), then resume at the
 *   steady pace with an empty bucket, without a burst.
 *
 * @example
 * ```ts
 * state = followServer(state, { ticket, httpStatus: 200, rateLimit: { remainingPerMinute: 12 } }, now);
 * ```
 */
export function followServer(state: SchedulerState, report: GateReport, now: number): SchedulerState {
  const { limits } = state;
  const { rateLimit } = report;
  const inFlight = Math.max(0, state.inFlight - 1);
  const common = { at: now, inFlight, lastSendAt: state.lastSendAt };
  let { minuteCap, dayCap, pausedUntil, pacer } = state;
  if (rateLimit.remainingPerMinute !== undefined) {
    const explained = limits.perMinute - sendsWithin(state.sends, now, limits.minuteWindowMs);
    minuteCap =
      rateLimit.remainingPerMinute < explained
        ? serverCap({ ...common, remaining: rateLimit.remainingPerMinute, windowMs: limits.minuteWindowMs, reserve: limits.perMinute - limits.usablePerMinute, spread: true })
        : undefined;
  }
  if (rateLimit.remainingPerDay !== undefined) {
    const explained = limits.perDay - sendsWithin(state.sends, now, limits.dayWindowMs);
    dayCap =
      rateLimit.remainingPerDay < explained
        ? serverCap({ ...common, remaining: rateLimit.remainingPerDay, windowMs: limits.dayWindowMs, reserve: limits.perDay - limits.usablePerDay, spread: false })
        : undefined;
  }
  if (report.httpStatus === 429) {
    pausedUntil = Math.max(pausedUntil, now + (rateLimit.retryAfterMs ?? limits.minuteWindowMs));
    pacer = pacerResumingAt(pacer, pausedUntil, limits);
  }
  return {
    ...state,
    inFlight,
    minuteCap,
    dayCap,
    pausedUntil,
    pacer,
    server: serverView(state.server, report, now),
    starts: markStart(state.starts, report.ticket, now, 'answered'),
  };
}

function serverView(previous: ServerView, report: GateReport, now: number): ServerView {
  const { remainingPerMinute, remainingPerDay } = report.rateLimit;
  if (remainingPerMinute === undefined && remainingPerDay === undefined) return previous;
  return {
    ...previous,
    ...(remainingPerMinute === undefined ? {} : { remainingPerMinute }),
    ...(remainingPerDay === undefined ? {} : { remainingPerDay }),
    at: now,
  };
}
