import { Redis } from 'ioredis';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock } from '../../src/emulator/index.js';
import type { PipelineDefinition } from '../../src/pipeline/pipeline-definition.js';
import type { PipelineEvent } from '../../src/pipeline/pipeline-events.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import { createRedisCheckpointStore, type RedisCheckpointStore } from '../../src/redis/index.js';
import { task } from '../pipeline/harness.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * A pipeline whose checkpoint store refuses a write for a moment — Redis out of memory (`maxmemory`
 * reached: every write answers `OOM`), as during a failover's read-only spell — exactly when a step's
 * execution is to be recorded `running`: the store must still end up holding what happened, and
 * the pipeline must not take the store's stale entry for another process's lead.
 */
type Step = 'first' | 'second';
const CHAIN: PipelineDefinition<Step> = { steps: { first: { canvasId: 'c-first' }, second: { canvasId: 'c-second', dependsOn: ['first'] } } };

let server: RedisServer;
let emulator: Emulator | undefined;
let store: RedisCheckpointStore | undefined;
let redis: Redis | undefined;
beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  await server.command('CONFIG', 'SET', 'maxmemory', '0');
  await store?.close();
  redis?.disconnect();
  await emulator?.close();
});
afterAll(async () => {
  await server.close();
});

/**
 * Drives the manual clock as virtual time (`driveClock`), with Redis in the loop: time moves to the
 * next timer only once nothing is waiting for Redis (a real process, answering in real time) — no
 * command of `redis` unanswered and `busy()` false —, else it waits for Redis's answer.
 */
async function drive(clock: ManualClock, redis: Redis, busy: () => boolean, until: () => boolean): Promise<void> {
  for (;;) {
    await driveClock(clock, { until, toTime: clock.now() });
    if (until()) return;
    const next = clock.nextTimerAt();
    if (next === undefined || busy() || redis.commandQueue.length > 0) await new Promise((resolve) => setTimeout(resolve, 1));
    else clock.advance(Math.max(0, next - clock.now()));
  }
}

/** How many writes Redis refused for want of memory since it started. */
async function oomRefusals(): Promise<number> {
  const stats = await server.command('INFO', 'errorstats');
  return Number(/errorstat_OOM:count=(\d+)/u.exec(stats)?.[1] ?? 0);
}

describe('a pipeline whose Redis checkpoint store refuses a write for a moment', () => {
  it('records a step running once Redis takes writes again, and the pipeline goes on to finish every step, each started once', async () => {
    const clock: ManualClock = createManualClock();
    emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [task('c-first', { durationMs: 30_000 }), task('c-second', { durationMs: 5_000 })] });
    const em = emulator;
    // Redis runs out of memory the moment the first step's start leaves: its `starting` is on record, its `running` will not be.
    let refusing = false;
    let configuring = false;
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const method = input instanceof Request ? input.method : init?.method;
      if (!refusing && method?.toUpperCase() === 'POST') {
        refusing = true;
        configuring = true;
        await server.command('CONFIG', 'SET', 'maxmemory', '1');
        configuring = false;
      }
      return em.fetch(input, init);
    };
    const client = createClient({ apiKey: em.apiKey, baseUrl: em.url, fetch, scheduler: em.scheduler, polling: { minMs: 1_000, maxMs: 4_000 } });
    redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    store = createRedisCheckpointStore({ redis });
    const busy = (): boolean => configuring;
    const refusedBefore = await oomRefusals();

    let events: PipelineEvent<Step>[] | undefined;
    let failure: unknown;
    const checkpoints = { store, pipelineId: 'p-oom' };
    let firstRunning = false;
    const noteRunning = (event: PipelineEvent<Step>): void => {
      if (event.type === 'checkpoint' && event.checkpoint.steps.first?.status === 'running') firstRunning = true;
    };
    lastValueFrom(runPipeline(client, CHAIN, { checkpoints, scheduler: em.scheduler }).pipe(tap(noteRunning), toArray())).then(
      (all) => (events = all),
      (error: unknown) => (failure = error ?? new Error('failed')),
    );
    await drive(clock, redis, busy, () => firstRunning);
    // Redis refused the `running` write (a real answer, waited for), then takes writes again.
    await vi.waitFor(async () => { expect(await oomRefusals()).toBeGreaterThan(refusedBefore); }, { timeout: 10_000, interval: 10 });
    await server.command('CONFIG', 'SET', 'maxmemory', '0');

    await drive(clock, redis, busy, () => events !== undefined || failure !== undefined);
    expect(failure).toBeUndefined();
    expect(events?.at(-1)).toMatchObject({ type: 'finished', outcomes: { first: { status: 'finish' }, second: { status: 'finish' } } });
    expect(em.requests.list({ endpoint: 'run', canvasId: 'c-first' })).toHaveLength(1);
    expect(em.requests.list({ endpoint: 'run', canvasId: 'c-second' })).toHaveLength(1);
    // The store holds every step's end: a process resuming the pipeline starts nothing again and finds nothing in doubt.
    await vi.waitFor(async () => {
      const stored = await store!.load('p-oom');
      expect(stored?.checkpoint.steps).toMatchObject({ first: { status: 'finish' }, second: { status: 'finish' } });
    }, { timeout: 10_000, interval: 10 });
  }, 30_000);
});
