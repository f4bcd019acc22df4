import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockScheduler, createManualClock, driveClock } from '../../src/emulator/index.js';
import { createRedisBudget } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
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
});
