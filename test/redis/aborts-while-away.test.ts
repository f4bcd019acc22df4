import { Redis } from 'ioredis';
import { type Subscription } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { createRedisBudget, type RedisBudget } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

/**
 * Runs left while the account's Redis is away: their aborts wait for it (an execution left running
 * spends credits, service.md §3.5) and reach the service once it answers again — each exactly once,
 * with no 429. On the emulator's service limits, its clock 20× real time, the budget's too.
 */
const SPEED = 20;
const RUNS = 30;
/** Emulator ms a request waits for an unreachable Redis before a read or start gives up. */
const UNAVAILABLE_AFTER_MS = 5_000;

let server: RedisServer;
let emulator: Emulator | undefined;
let redis: Redis | undefined;
let budget: RedisBudget | undefined;
beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  server.resume();
  await budget?.close();
  redis?.disconnect();
  await emulator?.close();
});
afterAll(async () => {
  await server.close();
});

/** Waits `ms` of the emulator's time. */
function emulatorWait(emulator: Emulator, ms: number): Promise<void> {
  return new Promise((resolve) => {
    emulator.scheduler.schedule(() => {
      resolve();
    }, ms);
  });
}

async function startRuns(account: string): Promise<{ ids: string[]; subscriptions: Subscription[]; warnings: unknown[] }> {
  emulator = await createEmulator({ speed: SPEED });
  redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  budget = createRedisBudget({ redis, account, timeScale: SPEED, scheduler: emulator.scheduler, unavailableAfterMs: UNAVAILABLE_AFTER_MS });
  const warnings: unknown[] = [];
  const client = createClient({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    fetch: emulator.fetch,
    budget,
    scheduler: emulator.scheduler,
    timeoutMs: REQUEST_TIMEOUT_MS,
    logger: { warn: (message, meta) => warnings.push({ message, meta }) },
  });
  const ids: string[] = [];
  const subscriptions: Subscription[] = [];
  await Promise.all(
    Array.from(
      { length: RUNS },
      (_, n) =>
        new Promise<void>((started) => {
          subscriptions.push(
            client.run('c-sample-timeout', { variables: { n } }, { output: 'final' }).subscribe((event) => {
              if (event.type === 'started') {
                ids.push(event.executionId);
                started();
              }
            }),
          );
        }),
    ),
  );
  return { ids, subscriptions, warnings };
}

function expectEachAbortedOnce(ids: readonly string[]): void {
  for (const id of ids) {
    expect(emulator!.requests.list({ endpoint: 'abort', executionId: id })).toHaveLength(1);
    expect(emulator!.executions.get(id)?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).toBe(true);
  }
  expect(emulator!.requests.list().filter((request) => request.status === 429)).toEqual([]);
}

describe('aborts while the Redis of a Redis budget is away', () => {
  it('holds the aborts of 30 runs left while Redis is frozen, and sends each exactly once when it answers again', async () => {
    const { ids, subscriptions, warnings } = await startRuns('acct-frozen');
    server.pause();
    for (const subscription of subscriptions) subscription.unsubscribe();
    // Well past the time a read would wait for Redis: no abort has gone, none was given up.
    await emulatorWait(emulator!, 4 * UNAVAILABLE_AFTER_MS);
    expect(emulator!.requests.list({ endpoint: 'abort' })).toEqual([]);
    // A read, meanwhile, waits for Redis no longer than unavailableAfterMs.
    const asked = emulator!.scheduler.now();
    await expect(budget!.acquire({ endpoint: 'status', priority: 'status', key: 'we-other' })).rejects.toMatchObject({ code: 'BUDGET_UNAVAILABLE' });
    expect(emulator!.scheduler.now() - asked).toBeGreaterThanOrEqual(UNAVAILABLE_AFTER_MS);
    server.resume();
    const running = (): string[] => ids.filter((id) => emulator!.executions.get(id)?.status !== 'failed');
    await vi.waitFor(() => { expect(running()).toEqual([]); }, { timeout: 30_000, interval: 50 });
    expectEachAbortedOnce(ids);
    expect(warnings).toEqual([]);
    // Redis is back: the budget serves reads again.
    await budget!.acquire({ endpoint: 'status', priority: 'status', key: 'we-other' });
  }, 60_000);

  it('holds the aborts of 30 runs left while Redis is killed (-9), and sends each exactly once after its restart', async () => {
    const { ids, subscriptions, warnings } = await startRuns('acct-killed');
    await server.stop({ crash: true });
    for (const subscription of subscriptions) subscription.unsubscribe();
    await emulatorWait(emulator!, 4 * UNAVAILABLE_AFTER_MS);
    expect(emulator!.requests.list({ endpoint: 'abort' })).toEqual([]);
    await server.restart();
    const running = (): string[] => ids.filter((id) => emulator!.executions.get(id)?.status !== 'failed');
    // Redis lost the account: the budget first waits a whole window (62 s of emulator time).
    await vi.waitFor(() => { expect(running()).toEqual([]); }, { timeout: 30_000, interval: 50 });
    expectEachAbortedOnce(ids);
    expect(warnings).toEqual([]);
  }, 60_000);
});
