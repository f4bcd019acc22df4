import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { isRateLimitError } from '../../src/errors/api-errors.js';
import { API_KEY, json, ok, startServer } from '../http/support/loopback-server.js';

// A server that answers with absurd or garbled rate-limit facts. Every call must end with
// a typed error or an answer at once: none may sit in a wait the server asked for, and no timer may be
// set past what a timer keeps (Node warns, then fires it after 1 ms, over and over).

const RATE_LIMITED = { statusCode: 429, message: 'Too Many Requests', error: 'Too Many Requests' };
const warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

describe('a server asking for an absurd Retry-After', () => {
  it.each([
    ['120', 120_000],
    ['999999999', 999_999_999_000],
    ['1e308', Number.MAX_SAFE_INTEGER],
    ['Fri, 31 Dec 9999 23:59:59 GMT', undefined],
  ] as const)('Retry-After: %s fails the call at once with RateLimitError carrying it, with the budget on and off', async (retryAfter, expectedMs) => {
    const server = await startServer((_request, response) => {
      json(response, 429, RATE_LIMITED, { 'retry-after': retryAfter });
    });
    for (const budget of [undefined, false] as const) {
      const client = createClient({ apiKey: API_KEY, baseUrl: `${server.origin}/v1`, ...(budget === undefined ? {} : { budget }) });
      const error: unknown = await client.workflows.search().catch((caught: unknown) => caught);
      expect(isRateLimitError(error)).toBe(true);
      const asked = (error as { rateLimit: { retryAfterMs?: number } }).rateLimit.retryAfterMs;
      if (expectedMs === undefined) expect(asked).toBeGreaterThan(200 * 365 * 86_400_000);
      else expect(asked).toBe(expectedMs);
      // The budget is not left paused for years: an abort could go within one window.
      const state = client.budget?.snapshot();
      if (state !== undefined) expect(state.nextSendAt - Date.now()).toBeLessThanOrEqual(62_000);
    }
    expect(server.requests).toHaveLength(2);
    expect(warnings.filter((warning) => warning.name === 'TimeoutOverflowWarning')).toEqual([]);
  });
});

describe('a server sending garbled rate-limit headers', () => {
  it.each(['0x0', '0.5', '-3', '1e2', 'none'])('X-RateLimit-Remaining-*: %s is ignored: the budget does not stall', async (value) => {
    const server = await startServer((_request, response) => {
      ok(response, [], { 'x-ratelimit-remaining-rpm': value, 'x-ratelimit-remaining-daily': value });
    });
    const client = createClient({ apiKey: API_KEY, baseUrl: `${server.origin}/v1` });
    await client.workflows.search();
    const state = client.budget!.snapshot();
    expect(state.followingServer).toBe(false);
    expect(state.server).toEqual({});
    await client.workflows.search();
    expect(server.requests).toHaveLength(2);
  });
});
