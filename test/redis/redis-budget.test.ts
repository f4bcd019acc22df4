import { Redis } from 'ioredis';
import { asyncScheduler } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { clockScheduler, createManualClock, driveClock } from '../../src/emulator/index.js';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import { createRedisBudget, createRedisCheckpointStore, createRedisDurations } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/** 32 base62 characters: the body of an API key (service.md §1.5). */
const KEY_BODY = 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(() => {
  // A test that froze Redis and failed leaves it running for the next.
  server.resume();
});
afterAll(async () => {
  await server.close();
});

describe('the Redis budget when Redis is away (fail closed)', () => {
  it('sends nothing, and fails what waits with BUDGET_UNAVAILABLE once Redis has not answered for unavailableAfterMs', async () => {
    const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    const clock = createManualClock();
    const budget = createRedisBudget({ redis, account: 'acct-away', scheduler: clockScheduler(clock), unavailableAfterMs: 5_000 });
    await budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-1' });
    await server.stop();
    let outcome: unknown;
    budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-2' }).then(
      () => (outcome = 'sent'),
      (error: unknown) => (outcome = error),
    );
    await driveClock(clock, { until: () => outcome !== undefined });
    expect(outcome).toMatchObject({ code: 'BUDGET_UNAVAILABLE' });
    expect(clock.now() - createManualClock().now()).toBeGreaterThanOrEqual(5_000);
    await budget.close();
    redis.disconnect();
    await server.restart();
  });

  it('refuses an account name that looks like an API key: the key is never stored', () => {
    expect(() => createRedisBudget({ redis: 'redis://127.0.0.1:1', account: 'rf_0123456789abcdef' })).toThrow(/API key/);
  });

  it.each([
    ['an upper-case prefix', `RF_${KEY_BODY}`],
    ['a prefix after a separator', `prod-rf_${KEY_BODY}`],
    ['a bare key body', KEY_BODY],
    ['a key body inside a name', `acme.${KEY_BODY}.prod`],
  ])('refuses an account name holding an API key (%s) with InvalidArgumentError, without quoting it', (_case, account) => {
    let thrown: unknown;
    try {
      createRedisBudget({ redis: 'redis://127.0.0.1:1', account });
    } catch (error) {
      thrown = error;
    }
    expect(isInvalidArgumentError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ argument: 'account', message: expect.stringMatching(/API key/u) as unknown });
    expect((thrown as Error).message).not.toContain(KEY_BODY);
  });

  it('refuses a redis option that is neither a URL nor an ioredis client, with InvalidArgumentError naming it', () => {
    for (const redis of [{}, null, 42, []]) {
      let thrown: unknown;
      try {
        createRedisBudget({ redis: redis as never, account: 'acct-bad-redis' });
      } catch (error) {
        thrown = error;
      }
      expect(isInvalidArgumentError(thrown)).toBe(true);
      expect(thrown).toMatchObject({ argument: 'redis', message: expect.stringMatching(/URL, or an ioredis client/u) as unknown });
    }
  });
});

describe('createRedisBudget with options that are not its own', () => {
  it('refuses no options, and a misspelt option (which would leave a limit unsaid), with InvalidArgumentError, as createAccountBudget does', () => {
    expect(() => createRedisBudget(null as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    expect(() => createRedisBudget(undefined as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    const misspelt = { redis: `redis+unix://${server.socket}`, account: 'acct-misspelt', requestPerMinute: 10 };
    expect(() => createRedisBudget(misspelt as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options.requestPerMinute', message: expect.stringContaining("did you mean 'requestsPerMinute'?") as unknown }));
  });
});

describe('the Redis stores with no options', () => {
  it.each<[string, (options: never) => unknown]>([
    ['createRedisCheckpointStore', (options) => createRedisCheckpointStore(options)],
    ['createRedisDurations', (options) => createRedisDurations(options)],
  ])('%s refuses null and no options with InvalidArgumentError, not a TypeError', (_name, create) => {
    for (const options of [null, undefined]) expect(() => create(options as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
  });
});

describe('closing the Redis budget while Redis is away', () => {
  it('gives an abort held by the account (a 429\'s pause) until unavailableAfterMs, then refuses it naming the execution, and logs it', async () => {
    const clock = createManualClock();
    const warnings: { message: string; meta: unknown }[] = [];
    const budget = createRedisBudget({ redis: `redis+unix://${server.socket}`, account: 'acct-close-held', scheduler: clockScheduler(clock), unavailableAfterMs: 5_000, durations: false, logger: { warn: (message, meta) => warnings.push({ message, meta }) } });
    const read = { endpoint: 'status', priority: 'status', key: 'we-1' } as const;
    await budget.acquire(read);
    budget.report({ ticket: read, httpStatus: 429, rateLimit: { remainingPerMinute: 0 } });
    let outcome: unknown;
    budget.acquire({ endpoint: 'abort', priority: 'abort', key: 'we-held' }).then(
      () => (outcome = 'sent'),
      (error: unknown) => (outcome = error),
    );
    let closed = false;
    const from = clock.now();
    void budget.close().then(() => (closed = true));
    await driveClock(clock, { until: () => closed && outcome !== undefined });
    expect(clock.now() - from).toBeLessThanOrEqual(5_000);
    expect(outcome).toMatchObject({ code: 'BUDGET_CLOSED', message: expect.stringContaining('we-held') as unknown });
    expect(warnings).toEqual([{ message: expect.stringContaining('abort') as unknown, meta: expect.objectContaining({ executionId: 'we-held' }) as unknown }]);
  });

  it('resolves within unavailableAfterMs when Redis is frozen, its own connection dropped', async () => {
    const clock = createManualClock();
    const budget = createRedisBudget({ redis: `redis+unix://${server.socket}`, account: 'acct-close-frozen', scheduler: clockScheduler(clock), unavailableAfterMs: 5_000, durations: false });
    await budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-1' });
    server.pause();
    const from = clock.now();
    let closed = false;
    void budget.close().then(() => (closed = true));
    await driveClock(clock, { until: () => closed });
    expect(clock.now() - from).toBeLessThanOrEqual(5_000);
    server.resume();
  });

  it('resolves within unavailableAfterMs, sends held aborts on the service\'s last count, and logs each one it could not send', async () => {
    const clock = createManualClock();
    const warnings: { message: string; meta: unknown }[] = [];
    const budget = createRedisBudget({
      redis: `redis+unix://${server.socket}`,
      account: 'acct-close-away',
      scheduler: clockScheduler(clock),
      unavailableAfterMs: 5_000,
      durations: false,
      logger: { warn: (message, meta) => warnings.push({ message, meta }) },
    });
    const read = { endpoint: 'status', priority: 'status', key: 'we-1' } as const;
    await budget.acquire(read);
    // The service's answer: two requests left in its minute.
    budget.report({ ticket: read, httpStatus: 200, rateLimit: { remainingPerMinute: 2, remainingPerDay: 9_000 } });
    server.pause();
    const outcomes = new Map<string, unknown>();
    for (const id of ['we-a', 'we-b', 'we-c']) {
      budget.acquire({ endpoint: 'abort', priority: 'abort', key: id }).then(
        () => outcomes.set(id, 'sent'),
        (error: unknown) => outcomes.set(id, error),
      );
    }
    // Redis has not answered for longer than unavailableAfterMs: the aborts still wait for it.
    await driveClock(clock, { toTime: clock.now() + 6_000 });
    expect(outcomes.size).toBe(0);
    let closed = false;
    void budget.close().then(() => (closed = true));
    await driveClock(clock, { until: () => closed && outcomes.size === 3 });
    expect(outcomes.get('we-a')).toBe('sent');
    expect(outcomes.get('we-b')).toBe('sent');
    expect(outcomes.get('we-c')).toMatchObject({ code: 'BUDGET_CLOSED', message: expect.stringContaining('we-c') as unknown });
    expect(warnings).toEqual([{ message: expect.stringContaining('abort') as unknown, meta: expect.objectContaining({ executionId: 'we-c' }) as unknown }]);
    server.resume();
  });
});

describe('the Redis budget on a real-time scheduler given as an option', () => {
  it('guards the account against a host clock that steps ahead, as it does with no scheduler given', async () => {
    const warnings: string[] = [];
    // The host's clock alone is made to step (an NTP step, a VM resumed): Redis's TIME and every timer stay real.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const budget = createRedisBudget({ redis: `redis+unix://${server.socket}`, account: 'acct-clock-step', scheduler: asyncScheduler, durations: false, logger: { warn: (message) => warnings.push(message) } });
      await budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-1' });
      vi.setSystemTime(Date.now() + 10 * 60_000);
      await budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-2' });
      await budget.close();
    } finally {
      vi.useRealTimers();
    }
    expect(warnings).toEqual([expect.stringContaining('clock is ahead') as unknown]);
  });
});

describe('the Redis budget holding requests for the shared account', () => {
  it('asks the shared account for a held abort ahead of the reads held before it', async () => {
    const clock = createManualClock();
    const budget = createRedisBudget({ redis: `redis+unix://${server.socket}`, account: 'acct-held-order', scheduler: clockScheduler(clock), unavailableAfterMs: 60_000, durations: false });
    await budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-0' });
    // Redis stops answering: the core lets the burst through on its mirror, each held for the account.
    server.pause();
    const sent: string[] = [];
    const ask = (priority: 'status' | 'abort', key: string): void => {
      void budget.acquire({ endpoint: priority, priority, key }).then(() => sent.push(key));
    };
    ask('status', 'we-1');
    ask('status', 'we-2');
    ask('abort', 'we-3');
    await driveClock(clock, { toTime: clock.now() + 100 });
    expect(sent).toEqual([]);
    server.resume();
    // Redis answers over its socket: time moves a little at each look until all three were granted.
    await vi.waitFor(async () => {
      await driveClock(clock, { toTime: clock.now() + 10 });
      expect(sent).toHaveLength(3);
    }, { timeout: 10_000, interval: 5 });
    // The abort asked last and goes first; the reads in the order they came.
    expect(sent).toEqual(['we-3', 'we-1', 'we-2']);
    await budget.close();
  });
});
