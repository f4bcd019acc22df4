import type { RateLimitInfo } from './gate.js';

function count(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** `Retry-After` is seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfterMs(headers: Headers, now: number): number | undefined {
  const raw = headers.get('retry-after');
  if (raw === null || raw.trim() === '') return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Reads the rate-limit facts of one answer: the four `X-RateLimit-*` counters the service sends past
 * auth (PROTOCOL §2.1) and `Retry-After`, which only the IP throttler sends (§1.3).
 *
 * @example
 * ```ts
 * readRateLimit(new Headers({ 'X-RateLimit-Remaining-RPM': '0' })); // { remainingPerMinute: 0 }
 * ```
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
