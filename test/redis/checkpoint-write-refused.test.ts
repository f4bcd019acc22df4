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
let pipelines = 0;
let pipelineId = '';
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

/**
 * A pipeline of CHAIN on a manual clock, its checkpoints in Redis; `atFirstStart` is done with Redis
 * the moment the first step's start leaves (its `starting` on record). Resolves with how it ended.
 */
async function runChain(atFirstStart: () => Promise<unknown>): Promise<{ readonly em: Emulator; readonly clock: ManualClock; readonly firstRunning: () => boolean; readonly ended: () => boolean; readonly outcome: () => { events?: PipelineEvent<Step>[]; failure?: unknown }; readonly drive: (until: () => boolean) => Promise<void> }> {
  const clock = createManualClock();
  pipelineId = `p-oom-${String((pipelines += 1))}`;
  emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [task('c-first', { durationMs: 30_000 }), task('c-second', { durationMs: 5_000 })] });
  const em = emulator;
  let started = false;
  let configuring = false;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const method = input instanceof Request ? input.method : init?.method;
    if (!started && method?.toUpperCase() === 'POST') {
      started = true;
      configuring = true;
      await atFirstStart();
      configuring = false;
    }
    return em.fetch(input, init);
  };
  const client = createClient({ apiKey: em.apiKey, baseUrl: em.url, fetch, scheduler: em.scheduler, polling: { minMs: 1_000, maxMs: 4_000 } });
  const connection = new Redis({ path: server.socket, maxRetriesPerRequest: null });
  redis = connection;
  store = createRedisCheckpointStore({ redis: connection });
  let events: PipelineEvent<Step>[] | undefined;
  let failure: unknown;
  let firstRunning = false;
  const noteRunning = (event: PipelineEvent<Step>): void => {
    if (event.type === 'checkpoint' && event.checkpoint.steps.first?.status === 'running') firstRunning = true;
  };
  lastValueFrom(runPipeline(client, CHAIN, { checkpoints: { store, pipelineId }, scheduler: em.scheduler }).pipe(tap(noteRunning), toArray())).then(
    (all) => (events = all),
    (error: unknown) => (failure = error ?? new Error('failed')),
  );
  return {
    em,
    clock,
    firstRunning: () => firstRunning,
    ended: () => events !== undefined || failure !== undefined,
    outcome: () => ({ ...(events === undefined ? {} : { events }), ...(failure === undefined ? {} : { failure }) }),
    drive: (until) => drive(clock, connection, () => configuring, until),
  };
}

describe('a pipeline whose Redis checkpoint store refuses writes', () => {
  it('records a step running once Redis takes writes again, and the pipeline goes on to finish every step, each started once', async () => {
    const refusedBefore = await oomRefusals();
    // Redis runs out of memory the moment the first step's start leaves: its `starting` is on record, its `running` will not be.
    const chain = await runChain(() => server.command('CONFIG', 'SET', 'maxmemory', '1'));
    const { em } = chain;
    await chain.drive(chain.firstRunning);
    // Redis refused the `running` write (a real answer, waited for), then takes writes again.
    await vi.waitFor(async () => { expect(await oomRefusals()).toBeGreaterThan(refusedBefore); }, { timeout: 10_000, interval: 10 });
    await server.command('CONFIG', 'SET', 'maxmemory', '0');

    await chain.drive(chain.ended);
    const { events, failure } = chain.outcome();
    expect(failure).toBeUndefined();
    expect(events?.at(-1)).toMatchObject({ type: 'finished', outcomes: { first: { status: 'finish' }, second: { status: 'finish' } } });
    expect(em.requests.list({ endpoint: 'run', canvasId: 'c-first' })).toHaveLength(1);
    expect(em.requests.list({ endpoint: 'run', canvasId: 'c-second' })).toHaveLength(1);
    // The store holds every step's end: a process resuming the pipeline starts nothing again and finds nothing in doubt.
    await vi.waitFor(async () => {
      const stored = await store!.load(pipelineId);
      expect(stored?.checkpoint.steps).toMatchObject({ first: { status: 'finish' }, second: { status: 'finish' } });
    }, { timeout: 10_000, interval: 10 });
  }, 30_000);

  it('gives up on a store that refuses for good after a few minutes: the next start fails with its error, and nothing else starts', async () => {
    const chain = await runChain(() => server.command('CONFIG', 'SET', 'maxmemory', '1'));
    const { em } = chain;
    await chain.drive(chain.ended);
    expect(chain.outcome().failure).toMatchObject({ message: expect.stringMatching(/^OOM/u) as unknown });
    expect(em.requests.list({ endpoint: 'run', canvasId: 'c-first' })).toHaveLength(1);
    expect(em.requests.list({ endpoint: 'run', canvasId: 'c-second' })).toHaveLength(0);
    // The first step ran to its end meanwhile; its records were given up within minutes of the service's time.
    expect(em.executions.list().find((execution) => execution.canvasId === 'c-first')?.status).toBe('finish');
    expect(chain.clock.now() - Date.parse('2026-01-01T00:00:00Z')).toBeLessThan(15 * 60_000);
  }, 30_000);
});
