import type { RateLimitInfo } from '../domain/requests.js';

/** A count is a plain decimal integer; `0x0`, `0.5`, `12abc`, `-1` or `1e3` say nothing we can trust. */
const COUNT = /^\d{1,15}$/u;
/** Delta-seconds (RFC 9110 §10.2.3), also in the decimal or exponent forms some servers write. */
const SECONDS = /^\d+(?:\.\d+)?(?:[eE]\+?\d+)?$/u;
/** IMF-fixdate, the one date form senders must generate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`. */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/u;

function count(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name)?.trim();
  return raw !== undefined && COUNT.test(raw) ? Number(raw) : undefined;
}

/**
 * `Retry-After` in ms: seconds or an HTTP date, never below 0 and never above the largest exact
 * number, so `1e308` or a date in the year 9999 reads as "longer than any wait" rather than as
 * Infinity; whoever waits compares it with what it accepts (`retry.maxWaitMs`) and bounds its timers.
 */
function retryAfterMs(headers: Headers, now: number): number | undefined {
  const raw = headers.get('retry-after')?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (SECONDS.test(raw)) return Math.min(Number(raw) * 1000, Number.MAX_SAFE_INTEGER);
  if (!HTTP_DATE.test(raw)) return undefined;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - now), Number.MAX_SAFE_INTEGER);
}

/**
 * Reads the rate-limit facts of one answer: the four `X-RateLimit-*` counters the service sends past
 * auth (service.md §2.1) and `Retry-After`, which only the IP throttler sends (§1.3). Parsed strictly:
 * a value that does not parse is left out, as if the header were absent, so a garbled header can never
 * stall requests.
 */
export function readRateLimit(headers: Headers, now: number = Date.now()): RateLimitInfo {
  const entries = {
    limitPerMinute: count(headers, 'x-ratelimit-limit-rpm'),
    remainingPerMinute: count(headers, 'x-ratelimit-remaining-rpm'),
    limitPerDay: count(headers, 'x-ratelimit-limit-daily'),
    remainingPerDay: count(headers, 'x-ratelimit-remaining-daily'),
    retryAfterMs: retryAfterMs(headers, now),
  };
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));
}
