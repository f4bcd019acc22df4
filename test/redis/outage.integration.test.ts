import { Redis } from 'ioredis';
import { tap } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { createRedisBudget } from '../../src/redis/index.js';
import type { RunEvent } from '../../src/runs/events.js';
import type { RunResult } from '../../src/domain/model.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

/** Emulator time runs 20× faster than real time: a 2-minute run takes 6 s. */
const SPEED = 20;
const RUNS = 4;

const SLOW_TASK: WorkflowDefinition = {
  canvasId: 'c-slow-task',
  title: 'Slow task',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-work', parents: ['node-start'], durationMs: 2 * 60_000, messages: [{ content: 'half way' }, { content: 'done' }] },
  ],
};

let server: RedisServer;
let emulator: Emulator;
beforeAll(async () => {
  server = await startRedisServer();
  emulator = await createEmulator({ speed: SPEED, listen: false, samples: false, workflows: [SLOW_TASK] });
});
afterAll(async () => {
  await emulator.close();
  await server.close();
});

describe('runs through an outage of the Redis budget (a real redis-server, frozen with SIGSTOP)', () => {
  it('waits out a Redis that answers nothing for longer than unavailableAfterMs, goes on following once it is back, and every run finishes', async () => {
    const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    // 20 s of emulator time: a second of real time.
    const budget = createRedisBudget({ redis, account: 'acct-outage', timeScale: SPEED, scheduler: emulator.scheduler, unavailableAfterMs: 20_000, durations: false });
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget, timeoutMs: REQUEST_TIMEOUT_MS });
    const events: RunEvent[][] = Array.from({ length: RUNS }, () => []);
    const outcomes: (RunResult | { error: unknown } | undefined)[] = Array.from({ length: RUNS }, () => undefined);
    for (let index = 0; index < RUNS; index += 1) {
      client
        .run('c-slow-task')
        .pipe(tap((event) => events[index]!.push(event)))
        .subscribe({
          next: (event) => {
            if (event.type === 'finished') outcomes[index] = event.result;
          },
          error: (error: unknown) => (outcomes[index] = { error }),
        });
    }
    // Readiness only: every run is following its execution.
    await vi.waitFor(() => {
      expect(events.every((run) => run.some((event) => event.type === 'node' && event.status === 'executing'))).toBe(true);
    }, { timeout: 20_000, interval: 20 });

    server.pause();
    const frozenAt = emulator.clock.now();
    // Readiness only: the budget gave up on Redis (past unavailableAfterMs) twice for every run, which is reconnecting.
    await vi.waitFor(() => {
      for (const run of events) {
        const last = run.at(-1);
        expect(last?.type === 'connection' ? last.reconnecting : undefined).toMatchObject({ error: 'request budget unavailable' });
        expect(last?.type === 'connection' ? last.reconnecting?.attempts : 0).toBeGreaterThanOrEqual(2);
      }
    }, { timeout: 30_000, interval: 20 });
    server.resume();
    const frozenFor = emulator.clock.now() - frozenAt;

    await vi.waitFor(() => {
      expect(outcomes.every((outcome) => outcome !== undefined)).toBe(true);
    }, { timeout: 60_000, interval: 50 });
    console.info(`Redis frozen for ${(frozenFor / 1000).toFixed(0)} s of emulator time (unavailableAfterMs 20 s): ${RUNS} runs reconnected and finished`);
    expect(frozenFor).toBeGreaterThan(40_000);
    for (const [index, outcome] of outcomes.entries()) {
      expect(outcome).toMatchObject({ status: 'finish', endedBy: 'finish' });
      const run = events[index]!;
      // Told reconnecting, then that reads succeed again, then followed to the end.
      const back = run.findIndex((event) => event.type === 'connection' && event.reconnecting === undefined);
      expect(back).toBeGreaterThan(run.findIndex((event) => event.type === 'connection'));
      expect(run.slice(back).some((event) => event.type === 'message')).toBe(true);
    }
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    await budget.close();
    redis.disconnect();
  }, 120_000);
});
