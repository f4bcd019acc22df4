import { describe, expect, it } from 'vitest';
import { readRateLimit } from '../../src/http/transport.js';

describe('readRateLimit (service.md §2.1, §1.3)', () => {
  it('reads the four counters, case-insensitively', () => {
    const headers = new Headers({ 'X-RateLimit-Limit-RPM': '100', 'X-RateLimit-Remaining-RPM': '0', 'X-RateLimit-Limit-Daily': '10000', 'X-RateLimit-Remaining-Daily': '42' });
    expect(readRateLimit(headers)).toEqual({ limitPerMinute: 100, remainingPerMinute: 0, limitPerDay: 10_000, remainingPerDay: 42 });
  });

  it('reads Retry-After in seconds or as an HTTP date', () => {
    expect(readRateLimit(new Headers({ 'Retry-After': '2.5' }))).toEqual({ retryAfterMs: 2_500 });
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(readRateLimit(new Headers({ 'Retry-After': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toEqual({ retryAfterMs: 30_000 });
    expect(readRateLimit(new Headers({ 'Retry-After': 'Wed, 31 Dec 2025 00:00:00 GMT' }), now)).toEqual({ retryAfterMs: 0 });
  });

  it('ignores absent and garbled values', () => {
    expect(readRateLimit(new Headers({ 'X-RateLimit-Remaining-RPM': 'many', 'Retry-After': 'soon' }))).toEqual({});
    expect(readRateLimit(new Headers())).toEqual({});
  });
});

describe('readRateLimit against a hostile server', () => {
  it.each(['0x0', '0.5', '-1', '1e3', ' 12abc', '12 13', '9'.repeat(20)])('ignores the count %j, which is not a plain decimal integer', (value) => {
    expect(readRateLimit(new Headers({ 'X-RateLimit-Remaining-RPM': value, 'X-RateLimit-Remaining-Daily': value }))).toEqual({});
  });

  it('reads an absurd Retry-After as a finite wait longer than any, never Infinity', () => {
    expect(readRateLimit(new Headers({ 'Retry-After': '999999999' }))).toEqual({ retryAfterMs: 999_999_999_000 });
    expect(readRateLimit(new Headers({ 'Retry-After': '1e308' }))).toEqual({ retryAfterMs: Number.MAX_SAFE_INTEGER });
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(readRateLimit(new Headers({ 'Retry-After': 'Fri, 31 Dec 9999 23:59:59 GMT' }), now).retryAfterMs).toBe(Date.parse('9999-12-31T23:59:59Z') - now);
  });

  it('does not take loose date-like text as a date', () => {
    expect(readRateLimit(new Headers({ 'Retry-After': '12 Jan' }))).toEqual({});
    expect(readRateLimit(new Headers({ 'Retry-After': '2030' }))).toEqual({ retryAfterMs: 2_030_000 });
  });
});
