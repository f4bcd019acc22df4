import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/emulator/index.js';
import { call, callJson, pollUntil, startEmulator } from './harness.js';

const limitHeaders = (headers: Headers): Record<string, string | null> => ({
  rpm: headers.get('x-ratelimit-limit-rpm'),
  remainingRpm: headers.get('x-ratelimit-remaining-rpm'),
  daily: headers.get('x-ratelimit-limit-daily'),
  remainingDaily: headers.get('x-ratelimit-remaining-daily'),
});

describe('account rate limit (service.md §2.1)', () => {
  it('carries the limit headers on every answer past auth, 100/min and 10,000/day by default', async () => {
    const emulator = await startEmulator();
    const first = await callJson(emulator, '/openapi/workflows');
    expect(limitHeaders(first.headers)).toEqual({ rpm: '100', remainingRpm: '99', daily: '10000', remainingDaily: '9999' });
    const businessError = await callJson(emulator, '/openapi/workflow/we-none/status');
    expect(limitHeaders(businessError.headers)).toMatchObject({ remainingRpm: '98' });
    const unauthorized = await fetch(`${emulator.url}/openapi/workflows`);
    expect(unauthorized.headers.get('x-ratelimit-limit-rpm')).toBeNull();
  });

  it('refuses the request past the limit with 429 and no Retry-After; one counter for every endpoint', async () => {
    const emulator = await startEmulator({ clock: createManualClock(), rateLimit: { perMinute: 3 } });
    expect((await callJson(emulator, '/openapi/workflows')).status).toBe(200);
    expect((await callJson(emulator, '/openapi/workflows/c-sample-linear')).status).toBe(200);
    expect((await callJson(emulator, '/openapi/workflow/we-x/status')).status).toBe(200);
    const refused = await callJson(emulator, '/openapi/workflow/c-sample-linear/run', { body: {} });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ statusCode: 429, message: 'Rate limit exceeded: 3 requests per minute', error: 'Too Many Requests' });
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(limitHeaders(refused.headers)).toMatchObject({ rpm: '3', remainingRpm: '0' });
    expect(emulator.executions.list()).toEqual([]);
  });

  it('uses fixed windows from the first request, in which rejected requests still count', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock, rateLimit: { perMinute: 2 } });
    const status = async (): Promise<number> => (await call(emulator, '/openapi/workflows')).status;
    expect(await status()).toBe(200);
    clock.advance(30_000);
    expect(await status()).toBe(200);
    expect(await status()).toBe(429);
    // The window started at the first request: 60 s after it, not after the last.
    clock.advance(29_999);
    expect(await status()).toBe(429);
    clock.advance(1);
    expect(await status()).toBe(200);
    expect(await status()).toBe(200);
    expect(await status()).toBe(429);
  });

  it('counts rejected requests too: requests refused by the minute limit use up the day', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock, rateLimit: { perMinute: 1, perDay: 3 } });
    const status = async (): Promise<number> => (await call(emulator, '/openapi/workflows')).status;
    expect([await status(), await status(), await status()]).toEqual([200, 429, 429]);
    clock.advance(60_000);
    const refused = await callJson(emulator, '/openapi/workflows');
    expect(refused.status).toBe(429);
    expect(refused.body.message).toBe('Daily rate limit exceeded: 3 requests per day');
  });

  it('limits per day as well', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock, rateLimit: { perMinute: 100, perDay: 2 } });
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    clock.advance(120_000);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    const refused = await callJson(emulator, '/openapi/workflows');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ statusCode: 429, message: 'Daily rate limit exceeded: 2 requests per day', error: 'Too Many Requests' });
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(limitHeaders(refused.headers)).toMatchObject({ daily: '2', remainingDaily: '0' });
    clock.advance(24 * 60 * 60 * 1_000);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
  });

  it('resets the minute window on the accelerated clock', async () => {
    // speed 120: one emulator minute is 500 ms of real time. How many calls land in a window depends on
    // the machine's speed; the rule does not, and neither does what is asserted.
    const emulator = await startEmulator({ speed: 120, rateLimit: { perMinute: 2 } });
    const statuses: number[] = [];
    await pollUntil(
      async () => {
        statuses.push((await call(emulator, '/openapi/workflows')).status);
        return statuses;
      },
      (seen) => seen.includes(429) && seen.at(-1) === 200,
    );
    // Each window lets its first two through and refuses the rest: a 429 only ever follows two 200s or a 429.
    expect(statuses.join(' ')).toMatch(/^200(?: 200(?: 429)*)?(?: 200(?: 200(?: 429)*)?)*$/u);
    // The window after the first refusal opened on the clock alone, a minute after the first request opened
    // the first (log times are read as a request arrives, a little before the limiter reads the clock: 10 s
    // of slack, 83 ms of real time).
    const log = emulator.requests.list({ endpoint: 'search' });
    expect(log.map((record) => record.status)).toEqual(statuses);
    const refusedAt = statuses.indexOf(429);
    const reopened = log.find((record, index) => index > refusedAt && record.status === 200)!;
    expect(reopened.emulatorTime - log[0]!.emulatorTime).toBeGreaterThanOrEqual(50_000);
  });

  it('does not count public file downloads, preflights or unknown routes', async () => {
    const emulator = await startEmulator({ clock: createManualClock(), rateLimit: { perMinute: 1 } });
    await fetch(`${emulator.url}/openapi/workflows`, { method: 'OPTIONS' });
    await fetch(`${emulator.url}/drive/file/public/df-x/a.txt`);
    await fetch(`${emulator.url}/nothing`);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
  });

  it('can be turned off: no 429s and no limit headers', async () => {
    const emulator = await startEmulator({ rateLimit: false });
    for (let i = 0; i < 120; i += 1) expect((await call(emulator, '/openapi/workflows', { transport: 'in-process' })).status).toBe(200);
    expect((await call(emulator, '/openapi/workflows')).headers.get('x-ratelimit-limit-rpm')).toBeNull();
  });
});

describe('the per-IP throttler headers (service.md §2.1)', () => {
  const throttlerHeaders = (headers: Headers): { limit: string | null; remaining: string | null; reset: string | null } => ({
    limit: headers.get('x-ratelimit-limit'),
    remaining: headers.get('x-ratelimit-remaining'),
    reset: headers.get('x-ratelimit-reset'),
  });

  it('puts unsuffixed X-RateLimit-Limit, -Remaining and -Reset on every answer, about 50 a second per route', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock });
    const first = await callJson(emulator, '/openapi/workflows');
    expect(throttlerHeaders(first.headers)).toEqual({ limit: '50', remaining: '49', reset: '1' });
    // Besides the account's suffixed ones, which count the account, not the route.
    expect(limitHeaders(first.headers)).toEqual({ rpm: '100', remainingRpm: '99', daily: '10000', remainingDaily: '9999' });
    // Each route has its own window: status (for any execution) is a route apart from search.
    const status = await callJson(emulator, '/openapi/workflow/we-none/status');
    expect(throttlerHeaders(status.headers)).toEqual({ limit: '50', remaining: '49', reset: '1' });
    expect(throttlerHeaders((await callJson(emulator, '/openapi/workflow/we-other/status')).headers).remaining).toBe('48');
    // In front of auth: a 401 carries them too, and no account headers.
    const unauthorized = await fetch(`${emulator.url}/openapi/workflows`);
    expect(unauthorized.status).toBe(401);
    expect(throttlerHeaders(unauthorized.headers)).toEqual({ limit: '50', remaining: '48', reset: '1' });
    expect(unauthorized.headers.get('x-ratelimit-limit-rpm')).toBeNull();
    // Public file links are routes as well; a preflight and an unknown route reach no route.
    expect(throttlerHeaders((await fetch(`${emulator.url}/drive/file/public/df-x/a.txt`)).headers).remaining).toBe('49');
    expect((await fetch(`${emulator.url}/openapi/workflows`, { method: 'OPTIONS' })).headers.get('x-ratelimit-limit')).toBeNull();
    expect((await fetch(`${emulator.url}/nothing`)).headers.get('x-ratelimit-limit')).toBeNull();
    // A production artefact the spec does not describe; off with the rate limit.
    for (const options of [{ profile: 'spec' as const }, { rateLimit: false as const }]) {
      const other = await startEmulator(options);
      expect(throttlerHeaders((await call(other, '/openapi/workflows')).headers)).toEqual({ limit: null, remaining: null, reset: null });
    }
  });

  it('counts down to 0 within a second and starts again a second after the window opened', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock });
    const remaining = async (): Promise<string | null> => (await call(emulator, '/openapi/workflows', { transport: 'in-process' })).headers.get('x-ratelimit-remaining');
    const seen: (string | null)[] = [];
    for (let i = 0; i < 51; i += 1) seen.push(await remaining());
    expect(seen.slice(0, 3)).toEqual(['49', '48', '47']);
    expect(seen.slice(-2)).toEqual(['0', '0']);
    clock.advance(999);
    const late = await call(emulator, '/openapi/workflows');
    expect(throttlerHeaders(late.headers)).toEqual({ limit: '50', remaining: '0', reset: '1' });
    clock.advance(1);
    expect(await remaining()).toBe('49');
  });
});
