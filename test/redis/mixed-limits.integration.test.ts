import { Redis } from 'ioredis';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { createRedisBudget, type RedisBudget } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

/**
 * Two processes of one account (here two budgets in one test process, each with its own connection
 * and process id), one configured with 100 requests a minute and one with 30, each with 20 long runs
 * to read, on the emulator's service limits and its clock 20× real time.
 */
const SPEED = 20;
const RUNS = 20;

let server: RedisServer;
let emulator: Emulator;
beforeAll(async () => {
  server = await startRedisServer();
  emulator = await createEmulator({ speed: SPEED });
});
afterAll(async () => {
  await emulator.close();
  await server.close();
});

/** The most of `times` in any window of 60 s. */
function busiestMinute(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last += 1) {
    while (sorted[last]! - sorted[first]! >= 60_000) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe('processes of one account configured with different per-minute limits', () => {
  it('100 and 30: the account keeps its pace, the 30 process keeps to its own, no 429', async () => {
    const processes = [100, 30].map((requestsPerMinute) => {
      const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
      const budget: RedisBudget = createRedisBudget({ redis, account: 'acct-mixed-limits', requestsPerMinute, timeScale: SPEED, scheduler: emulator.scheduler, durations: false });
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget, scheduler: emulator.scheduler, timeoutMs: REQUEST_TIMEOUT_MS });
      const ids = new Set<string>();
      const subscriptions: Subscription[] = Array.from({ length: RUNS }, (_, n) =>
        client.run('c-sample-timeout', { variables: { requestsPerMinute, n } }).subscribe({
          next: (event) => {
            if (event.type === 'started') ids.add(event.executionId);
          },
          error: () => undefined,
        }),
      );
      return { redis, budget, ids, subscriptions };
    });
    const from = emulator.scheduler.now();
    await new Promise<void>((resolve) => {
      emulator.scheduler.schedule(() => {
        resolve();
      }, 4 * 60_000);
    });
    for (const { subscriptions } of processes) for (const subscription of subscriptions) subscription.unsubscribe();
    const requests = emulator.requests.list().filter((request) => request.emulatorTime >= from + 60_000 && request.emulatorTime < from + 4 * 60_000);
    const perMinute = requests.length / 3;
    const slow = processes[1]!;
    const slowTimes = emulator.requests.list().filter((request) => request.executionId !== undefined && slow.ids.has(request.executionId) && request.endpoint !== 'abort').map((request) => request.emulatorTime);
    console.info(`100 + 30 on one account: ${perMinute.toFixed(1)} requests per emulator minute (minutes 2–4); the 30 process's busiest minute ${busiestMinute(slowTimes)}`);
    // One process alone reads its runs at one per 1.1 × 682 ms, about 80 a minute.
    expect(perMinute).toBeGreaterThan(72);
    expect(busiestMinute(slowTimes)).toBeLessThanOrEqual(30);
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    for (const { budget, redis } of processes) {
      await budget.close();
      redis.disconnect();
    }
  }, 60_000);
});
