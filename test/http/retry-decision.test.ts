import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, RateLimitError, ServerError } from '../../src/errors/api-errors.js';
import { NetworkError, TimeoutError } from '../../src/errors/transport-errors.js';
import { InvalidArgumentError, ResponseValidationError } from '../../src/errors/validation-errors.js';
import type { Endpoint } from '../../src/domain/endpoints.js';
import { decideRetry, type RetryInput } from '../../src/http/transport.js';

const policy = { retries: 3, baseDelayMs: 100, maxDelayMs: 1_000, rateLimitWaitMs: 60_000, maxWaitMs: 65_000 };
const ENDPOINTS: readonly Endpoint[] = ['run', 'abort', 'status', 'output', 'search', 'detail', 'upload', 'copilot'];

function decide(endpoint: Endpoint, error: unknown, overrides: Partial<RetryInput> = {}) {
  return decideRetry({ endpoint, attempt: 1, error, policy, random: 0.5, ...overrides });
}

const rateLimited = (endpoint: Endpoint, rateLimit = {}) => new RateLimitError({ endpoint, status: 429, rateLimit });

describe('decideRetry', () => {
  it.each(['status', 'output', 'search', 'detail', 'abort', 'upload'] as const)('retries %s on network errors, timeouts, 5xx and unreadable bodies', (endpoint) => {
    expect(decide(endpoint, new NetworkError({ endpoint }))).toMatchObject({ retry: true, reason: 'network' });
    expect(decide(endpoint, new TimeoutError({ endpoint, timeoutMs: 10 }))).toMatchObject({ retry: true, reason: 'timeout' });
    expect(decide(endpoint, new ServerError({ endpoint, status: 503 }))).toMatchObject({ retry: true, reason: 'server error' });
    expect(decide(endpoint, new ResponseValidationError({ endpoint, reason: 'not-json' }))).toMatchObject({ retry: true });
  });

  it.each(['run', 'copilot'] as const)('never retries %s after a failure that may have reached the server', (endpoint) => {
    for (const error of [new NetworkError({ endpoint }), new TimeoutError({ endpoint, timeoutMs: 1 }), new ServerError({ endpoint, status: 502 }), new ResponseValidationError({ endpoint, reason: 'not-json' })]) {
      expect(decide(endpoint, error)).toEqual({ retry: false, reason: `${endpoint} is not repeatable` });
    }
  });

  it.each(['run', 'copilot'] as const)('retries %s whose connection was never made (refused, unknown host): it reached nothing', (endpoint) => {
    const refused = new NetworkError({ endpoint, cause: new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }) });
    expect(decide(endpoint, refused)).toMatchObject({ retry: true, reason: 'network' });
    const reset = new NetworkError({ endpoint, cause: new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }) });
    expect(decide(endpoint, reset)).toEqual({ retry: false, reason: `${endpoint} is not repeatable` });
  });

  it('does not retry answers that would fail the same way', () => {
    for (const error of [new NotFoundError({ endpoint: 'status', status: 200 }), new ConflictError({ endpoint: 'run', status: 409 }), new ResponseValidationError({ endpoint: 'status', reason: 'schema' }), new InvalidArgumentError('x', 'y'), new Error('boom')]) {
      expect(decide('status', error).retry).toBe(false);
    }
  });

  it('waits a full window after a 429 without Retry-After (service.md §2.1)', () => {
    expect(decide('status', rateLimited('status', { remainingPerMinute: 0 }))).toEqual({ retry: true, delayMs: 60_000, reason: 'rate limited' });
  });

  it('leaves the window to the budget when a gate holds every request after a 429', () => {
    expect(decide('status', rateLimited('status', { remainingPerMinute: 0 }), { gated: true })).toEqual({ retry: true, delayMs: 0, reason: 'rate limited' });
    expect(decide('search', rateLimited('search', { retryAfterMs: 30_000 }), { gated: true })).toMatchObject({ retry: true, delayMs: 0 });
    expect(decide('run', rateLimited('run'), { gated: true })).toMatchObject({ retry: true, delayMs: 0 });
  });

  it('surfaces a Retry-After over maxWaitMs at once behind a gate too, instead of leaving the call in its queue', () => {
    expect(decide('status', rateLimited('status', { retryAfterMs: 120_000 }), { gated: true })).toEqual({ retry: false, reason: 'server asks to wait 120000 ms, over maxWaitMs' });
    expect(decide('abort', rateLimited('abort', { retryAfterMs: Number.MAX_SAFE_INTEGER }), { gated: true }).retry).toBe(false);
  });

  it('obeys Retry-After over its own timing (service.md §1.3)', () => {
    expect(decide('search', rateLimited('search', { retryAfterMs: 2_000 }))).toMatchObject({ retry: true, delayMs: 2_000 });
    expect(decide('status', new ServerError({ endpoint: 'status', status: 503, retryAfterMs: 4_000 }))).toMatchObject({ retry: true, delayMs: 4_000 });
  });

  it('retries a rate-limited start, which was refused and not executed, past the duplicate window', () => {
    expect(decide('run', rateLimited('run', { retryAfterMs: 0 }))).toMatchObject({ retry: true, delayMs: 1_100 });
  });

  it('gives up when the daily budget is spent or the server asks for too long a wait', () => {
    expect(decide('status', rateLimited('status', { remainingPerDay: 0 }))).toEqual({ retry: false, reason: 'daily limit reached' });
    expect(decide('status', rateLimited('status', { retryAfterMs: 3_600_000 })).retry).toBe(false);
  });

  it('stops when the retries are spent', () => {
    expect(decide('status', new NetworkError({ endpoint: 'status' }), { attempt: 4 })).toEqual({ retry: false, reason: 'retries exhausted' });
    expect(decide('status', new NetworkError({ endpoint: 'status' }), { attempt: 1, policy: { ...policy, retries: 0 } }).retry).toBe(false);
  });

  it('backs off exponentially with jitter, capped', () => {
    const delays = [1, 2, 3, 4, 5].map((attempt) => decide('status', new NetworkError({ endpoint: 'status' }), { attempt, random: 0, policy: { ...policy, retries: 10 } }));
    expect(delays.map((d) => (d.retry ? d.delayMs : -1))).toEqual([50, 100, 200, 400, 500]);
  });

  it('property: delays stay within [step/2, step] and under the cap; starts retry only on 429', () => {
    const errorFor = (endpoint: Endpoint, kind: number): unknown =>
      [new NetworkError({ endpoint }), new TimeoutError({ endpoint, timeoutMs: 1 }), new ServerError({ endpoint, status: 500 }), rateLimited(endpoint, { retryAfterMs: 10 }), new NotFoundError({ endpoint, status: 404 })][kind];
    fc.assert(
      fc.property(fc.constantFrom(...ENDPOINTS), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 20 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (endpoint, kind, attempt, random) => {
        const wide = { ...policy, retries: 20 };
        const decision = decideRetry({ endpoint, attempt, error: errorFor(endpoint, kind), policy: wide, random });
        if (!decision.retry) return;
        expect(decision.delayMs).toBeGreaterThanOrEqual(0);
        expect(decision.delayMs).toBeLessThanOrEqual(wide.maxWaitMs);
        if (kind < 3) expect(decision.delayMs).toBeLessThanOrEqual(wide.maxDelayMs);
        if (endpoint === 'run' || endpoint === 'copilot') expect(kind).toBe(3);
      }),
    );
  });
});
