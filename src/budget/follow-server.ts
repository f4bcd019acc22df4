import type { GateReport } from '../http/gate.js';
import { markStart } from './duplicate-starts.js';
import { settleInFlight } from './in-flight.js';
import { pacerResumingAt } from './pacing.js';
import type { SchedulerState, ServerView } from './scheduler-state.js';
import { sendsWithin } from './send-log.js';
import { serverCap } from './server-cap.js';

/**
 * The state after an attempt's report arrives at `now`: the request is no longer on its way, the
 * identical-start mark moves to the answer, and what the service said about its count is applied.
 * Everything is anchored on the request's send time: the service's window that counted it opened at
 * most 60 s before it arrived, and it arrived within the latency allowance of its send, so that window
 * has reset by send + 60 s + allowance (our window length).
 *
 * - `X-RateLimit-Remaining-RPM` / `-Daily` lower than our own sends explain means someone else uses
 *   the account (PROTOCOL §2.1). Our sends that window can have counted are those from one window
 *   before the request's send up to now; when the service says less than the limit minus those is
 *   left, a cap spreads what is left over the time until that window has reset (per day: it only
 *   stops at zero, a day being too long to spread over). A later report that shows no gap lifts the
 *   cap: the latest answer is the freshest count.
 * - A 429 pauses everything until that window has reset, or for the throttler's `Retry-After`
 *   (PROTOCOL §1.3), then resumes at the steady pace with an empty bucket: no burst.
 *
 * @example
 * ```ts
 * state = followServer(state, { ticket, httpStatus: 200, rateLimit: { remainingPerMinute: 12 } }, now);
 * ```
 */
export function followServer(state: SchedulerState, report: GateReport, now: number): SchedulerState {
  const { limits } = state;
  const { rateLimit } = report;
  const settled = settleInFlight(state.inFlight, report.ticket);
  const sentAt = settled.sentAt ?? now;
  const common = { sentAt, now, inFlight: settled.remaining.length, lastSendAt: state.lastSendAt };
  let { minuteCap, dayCap, pausedUntil, pacer } = state;
  if (rateLimit.remainingPerMinute !== undefined) {
    const remaining = rateLimit.remainingPerMinute;
    const explained = limits.perMinute - sendsWithin(state.sends, now, now - sentAt + limits.minuteWindowMs);
    const reserve = limits.perMinute - limits.usablePerMinute;
    minuteCap = remaining < explained ? serverCap({ ...common, remaining, windowMs: limits.minuteWindowMs, reserve, spread: true }) : undefined;
  }
  if (rateLimit.remainingPerDay !== undefined) {
    const remaining = rateLimit.remainingPerDay;
    const explained = limits.perDay - sendsWithin(state.sends, now, now - sentAt + limits.dayWindowMs);
    const reserve = limits.perDay - limits.usablePerDay;
    dayCap = remaining < explained ? serverCap({ ...common, remaining, windowMs: limits.dayWindowMs, reserve, spread: false }) : undefined;
  }
  if (report.httpStatus === 429) {
    const resumeAt = rateLimit.retryAfterMs === undefined ? sentAt + limits.minuteWindowMs : now + rateLimit.retryAfterMs;
    pausedUntil = Math.max(pausedUntil, resumeAt);
    pacer = pacerResumingAt(pacer, pausedUntil, limits);
  }
  return {
    ...state,
    inFlight: settled.remaining,
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
