import type { GateReport } from '../domain/requests.js';
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
  const zeroUntil = { ...state.zeroUntil };
  const ignoring = { ...state.ignoring };
  const answered = report.httpStatus !== undefined && report.httpStatus >= 200 && report.httpStatus < 300;
  const scopes = [
    { scope: 'minute', remaining: rateLimit.remainingPerMinute, limit: limits.perMinute, usable: limits.usablePerMinute, windowMs: limits.minuteWindowMs, spread: true },
    { scope: 'day', remaining: rateLimit.remainingPerDay, limit: limits.perDay, usable: limits.usablePerDay, windowMs: limits.dayWindowMs, spread: false },
  ] as const;
  for (const { scope, remaining, limit, usable, windowMs, spread } of scopes) {
    if (remaining === undefined || ignoring[scope]) continue;
    // A request sent once the service's "0 remaining" had run its course, answered with success and
    // "0 remaining" again, shows the count means nothing (a server stuck at 0): stop following it
    // rather than stall every request for ever. A 429 still pauses.
    if (answered && remaining === 0 && Number.isFinite(zeroUntil[scope]) && sentAt >= zeroUntil[scope]) {
      ignoring[scope] = true;
      if (scope === 'minute') minuteCap = undefined;
      else dayCap = undefined;
      continue;
    }
    const explained = limit - sendsWithin(state.sends, now, now - sentAt + windowMs);
    let cap = remaining < explained ? serverCap({ ...common, remaining, windowMs, reserve: limit - usable, spread }) : undefined;
    // The day cannot be spread and is too long to wait blind: with nothing left for us, look again
    // after one minute's window (one request), never a whole day later.
    if (cap !== undefined && scope === 'day' && cap.allowance === 0) cap = { ...cap, until: Math.min(cap.until, sentAt + limits.minuteWindowMs) };
    zeroUntil[scope] = remaining === 0 && cap !== undefined ? cap.until : Number.NEGATIVE_INFINITY;
    if (scope === 'minute') minuteCap = cap;
    else dayCap = cap;
  }
  if (report.httpStatus === 429) {
    // Never longer than one window: the account limiter's count resets within it (PROTOCOL §2.1), and
    // a throttler asking for more (§1.3) fails the call that met it (http/retry-decision.ts) rather
    // than holding every call of the client, aborts included, for as long as it likes.
    const resumeAt = rateLimit.retryAfterMs === undefined ? sentAt + limits.minuteWindowMs : now + Math.min(rateLimit.retryAfterMs, limits.minuteWindowMs);
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
    zeroUntil,
    ignoring,
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
