import type { ServerView } from '../domain/budget.js';
import type { GateReport } from '../domain/requests.js';
import type { AccountState } from './account-state.js';
import { identicalStartKey } from './duplicate-starts.js';
import { pacerResumingAt } from './pacing.js';
import { serverCap } from './server-cap.js';

/**
 * Applies an attempt's report, arrived at `now`, to the account: the request is no longer on its way,
 * the identical-start mark moves to the answer, and what the service said about its count and its
 * limits is taken in. Everything is anchored on the request's send time: the service's window that
 * counted it opened at most 60 s before it arrived, and it arrived within the latency allowance of its
 * send, so that window has reset by send + 60 s + allowance (our window length). Returns whether the
 * report matched a request in flight.
 *
 * - `X-RateLimit-Limit-RPM` / `-Daily` lower than configured lower the budget's limits: the account's
 *   limit is the service's to say (service.md §2.1).
 * - `X-RateLimit-Remaining-RPM` / `-Daily` lower than our own sends explain means someone else uses
 *   the account (service.md §2.1). Our sends that window can have counted are those from one window
 *   before the request's send up to now; when the service says less than the limit minus those is
 *   left, a cap spreads what is left over the time until that window has reset (per day: it only
 *   stops at zero, a day being too long to spread over, and then looks again each minute). A later
 *   report that shows no gap lifts the cap: the latest answer is the freshest count.
 * - A 429 pauses everything until that window has reset, or for the throttler's `Retry-After`
 *   (service.md §1.3), then resumes at the steady pace with an empty bucket: no burst.
 *
 * @example
 * ```ts
 * followServer(account, { ticket, httpStatus: 200, rateLimit: { remainingPerMinute: 12 } }, now);
 * ```
 */
export function followServer(account: AccountState, report: GateReport, now: number): boolean {
  const { rateLimit } = report;
  account.adoptServerLimits(rateLimit.limitPerMinute, rateLimit.limitPerDay);
  const { limits } = account;
  const settledAt = account.inFlight.settle(report.ticket);
  const sentAt = settledAt ?? now;
  const common = { sentAt, now, inFlight: account.inFlight.size, lastSendAt: account.lastSendAt };
  const answered = report.httpStatus !== undefined && report.httpStatus >= 200 && report.httpStatus < 300;
  const scopes = [
    { scope: 'minute', remaining: rateLimit.remainingPerMinute, limit: limits.perMinute, reserve: limits.perMinute - limits.usablePerMinute, windowMs: limits.minuteWindowMs, spread: true },
    { scope: 'day', remaining: rateLimit.remainingPerDay, limit: limits.perDay, reserve: limits.dayReserve, windowMs: limits.dayWindowMs, spread: false },
  ] as const;
  for (const { scope, remaining, limit, reserve, windowMs, spread } of scopes) {
    if (remaining === undefined || account.ignoring[scope]) continue;
    // A request sent once the service's "0 remaining" had run its course, answered with success and
    // "0 remaining" again, shows the count means nothing (a server stuck at 0): stop following it
    // rather than stall every request for ever. A 429 still pauses.
    if (answered && remaining === 0 && Number.isFinite(account.zeroUntil[scope]) && sentAt >= account.zeroUntil[scope]) {
      account.ignoring[scope] = true;
      setCap(account, scope, undefined);
      continue;
    }
    const explained = limit - account.sends.within(now, now - sentAt + windowMs);
    // The day is too long to wait blind: with nothing left for polls, one looks again after each
    // minute's window, never a whole day later.
    const lookEvery = scope === 'day' ? { lookEveryMs: limits.minuteWindowMs } : {};
    const cap = remaining < explained ? serverCap({ ...common, remaining, windowMs, reserve, spread, ...lookEvery }) : undefined;
    account.zeroUntil[scope] = remaining === 0 && cap !== undefined ? (cap.look?.at ?? cap.until) : Number.NEGATIVE_INFINITY;
    setCap(account, scope, cap);
  }
  if (report.httpStatus === 429) {
    // Never longer than one window: the account limiter's count resets within it (service.md §2.1), and
    // a throttler asking for more (§1.3) fails the call that met it (http/retry-decision.ts) rather
    // than holding every call of the client, aborts included, for as long as it likes.
    const resumeAt = rateLimit.retryAfterMs === undefined ? sentAt + limits.minuteWindowMs : now + Math.min(rateLimit.retryAfterMs, limits.minuteWindowMs);
    account.pausedUntil = Math.max(account.pausedUntil, resumeAt);
    account.pacer = pacerResumingAt(account.pacer, account.pausedUntil, limits);
  }
  account.server = serverView(account.server, report, now);
  account.repaceDay(now);
  const key = identicalStartKey(report.ticket);
  if (key !== undefined) account.starts.mark(key, now, 'answered');
  return settledAt !== undefined;
}

function setCap(account: AccountState, scope: 'minute' | 'day', cap: ReturnType<typeof serverCap> | undefined): void {
  if (scope === 'minute') account.minuteCap = cap;
  else account.dayCap = cap;
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
