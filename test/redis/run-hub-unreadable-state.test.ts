import { Redis } from 'ioredis';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock } from '../../src/emulator/index.js';
import { createRedisRunHub } from '../../src/redis/index.js';
import { hubKeys } from '../../src/redis/account-name.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

describe('createRedisRunHub: an execution\'s state in Redis that does not read', () => {
  it('is skipped with a warning, as an entry that is not an event is: a later follower still ends with the stream\'s finished, nothing unhandled', async () => {
    const emulator = await createEmulator({ clock: createScaledClock(25), rateLimit: false });
    const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    const account = `hub-unreadable-${process.pid}`;
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message), error: () => undefined, info: () => undefined, debug: () => undefined };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    // A stream of one entry: the first ones are trimmed away, so a later follower opens it at the state.
    const first = createRedisRunHub({ redis, account, scheduler: emulator.scheduler, maxLen: 1 });
    const later = createRedisRunHub({ redis, account, scheduler: emulator.scheduler, maxLen: 1, logger });
    try {
      const options = { apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, polling: { minMs: 1_000, maxMs: 1_000 }, timeoutMs: REQUEST_TIMEOUT_MS } as const;
      const { executionId } = await createClient({ ...options, hub: first }).executions.start('c-sample-linear');
      await lastValueFrom(createClient({ ...options, hub: first }).watch(executionId));
      // Another program wrote over the execution's state.
      await redis.hset(hubKeys(account, executionId).state, 'state', '{not json');
      const events = await lastValueFrom(createClient({ ...options, hub: later }).watch(executionId).pipe(toArray()));
      expect(events.at(-1)?.type).toBe('finished');
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(warnings.some((message) => message.includes('state') && message.includes('not a run state'))).toBe(true);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await later.close();
      await first.close();
      redis.disconnect();
      await emulator.close();
    }
  }, 20_000);
});
