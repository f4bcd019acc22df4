import { rename } from 'node:fs/promises';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { concat, firstValueFrom, filter, lastValueFrom, Observable, of, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckpointStoreEvent } from '../../src/pipeline/checkpoint-store.js';
import { isCorruptCheckpointError } from '../../src/pipeline/corrupt-checkpoint-error.js';
import type { PipelineDefinition } from '../../src/pipeline/pipeline-definition.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import { createRedisCheckpointStore, type RedisCheckpointStore } from '../../src/redis/index.js';
import { fakeClient, startedEvent } from '../pipeline/fake-client.js';
import { setup, task } from '../pipeline/harness.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

let server: RedisServer;
let stores: RedisCheckpointStore[] = [];
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  stores = [];
  await server.close();
});
const open = (): RedisCheckpointStore => {
  const store = createRedisCheckpointStore({ redis: `redis+unix://${server.socket}` });
  stores.push(store);
  return store;
};

describe('the Redis checkpoint store on a real redis-server', () => {
  it('moves a step by compare-and-set under the latest claim, from any process', async () => {
    const a = open();
    const b = open();
    const old = await a.claim('p-cas');
    const starting = { status: 'starting', attempt: 1, attemptedAt: 1_000 } as const;
    expect(await a.transition('p-cas', 'first', undefined, starting, old)).toBe(true);
    // Another process takes the lead: the old token can write no more.
    const fresh = await b.claim('p-cas');
    const running = { status: 'running', executionId: 'we-1', attempt: 1, attemptedAt: 1_000 } as const;
    expect(await a.transition('p-cas', 'first', starting, running, old)).toBe(false);
    expect(await b.transition('p-cas', 'first', undefined, running, fresh)).toBe(false);
    expect(await b.transition('p-cas', 'first', starting, running, fresh)).toBe(true);
    expect(await a.load('p-cas')).toEqual({ checkpoint: { steps: { first: running } }, cancelRequested: false, fence: fresh });
    expect(await a.load('p-nothing')).toBeUndefined();
  });

  it('tells every follower of a pipeline its step changes and a cancel, also one asked before it listened', async () => {
    const writer = open();
    const reader = open();
    const changes = firstValueFrom(reader.events('p-events').pipe(take(2), toArray()));
    // Publish once the subscription has reached Redis.
    await vi.waitFor(async () => {
      expect(await server.command('PUBSUB', 'NUMSUB', 'fs:pipeline:p-events')).toMatch(/:1\r\n$/u);
    });
    const token = await writer.claim('p-events');
    await writer.transition('p-events', 'first', undefined, { status: 'starting', attempt: 1 }, token);
    await writer.requestCancel('p-events');
    expect((await changes).map((event) => event.type)).toEqual(['step', 'cancel']);
    const late = await firstValueFrom(open().events('p-events').pipe(filter((event) => event.type === 'cancel')));
    expect(late).toEqual({ type: 'cancel', pipelineId: 'p-events' });
  });

  it('leaves a client it was given open, and keeps every key of a pipeline in one hash slot', async () => {
    const redis = new Redis({ path: server.socket });
    const store = createRedisCheckpointStore({ redis });
    const token = await store.claim('p-own');
    await store.transition('p-own', 'a', undefined, { status: 'starting', attempt: 1 }, token);
    await store.close();
    expect(await redis.ping()).toBe('PONG');
    expect((await redis.keys('*p-own*')).every((key) => key.startsWith('{fs:pipeline:p-own}:'))).toBe(true);
    redis.disconnect();
  });
});

/** Keeps new connections away from the server (its socket moved aside) while connected clients stay. */
async function unreachable<T>(during: () => Promise<T>): Promise<T> {
  await rename(server.socket, `${server.socket}.away`);
  try {
    return await during();
  } finally {
    await rename(`${server.socket}.away`, server.socket);
  }
}

/** An ioredis connection of the test's own, connected before the socket is moved aside. */
async function admin(): Promise<Redis> {
  const redis = new Redis({ path: server.socket });
  await redis.ping();
  return redis;
}

const subscribers = (redis: Redis, channel: string): Promise<number> => redis.pubsub('NUMSUB', channel).then((answer) => (answer as [string, number])[1]);

describe('a cancel while a follower of the Redis checkpoint store reconnects', () => {
  it('tells a follower a cancel asked while its pub/sub connection was away, once it is back', async () => {
    const follower = open();
    const writer = open();
    const control = await admin();
    const seen: CheckpointStoreEvent[] = [];
    const following = follower.events('p-away').subscribe((event) => seen.push(event));
    await expect.poll(() => subscribers(control, 'fs:pipeline:p-away')).toBe(1);
    await writer.claim('p-away');
    await unreachable(async () => {
      // The follower's pub/sub connection drops and cannot come back while the cancel is asked.
      await control.client('KILL', 'TYPE', 'pubsub');
      await expect.poll(() => subscribers(control, 'fs:pipeline:p-away')).toBe(0);
      await writer.requestCancel('p-away');
    });
    await expect.poll(() => subscribers(control, 'fs:pipeline:p-away'), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => seen, { timeout: 5_000 }).toContainEqual({ type: 'cancel', pipelineId: 'p-away' });
    following.unsubscribe();
    control.disconnect();
  });
});

describe('a cancel crossing a start in the Redis checkpoint store', () => {
  it('refuses to record a step starting once the pipeline is cancelled, and still records the ends of what runs', async () => {
    const store = open();
    const token = await store.claim('p-refuse');
    const running = { status: 'running', executionId: 'we-1', attempt: 1 } as const;
    expect(await store.transition('p-refuse', 'a', undefined, { status: 'starting', attempt: 1 }, token)).toBe(true);
    expect(await store.transition('p-refuse', 'a', { status: 'starting', attempt: 1 }, running, token)).toBe(true);
    await store.requestCancel('p-refuse');
    expect(await store.transition('p-refuse', 'b', undefined, { status: 'starting', attempt: 1 }, token)).toBe(false);
    expect(await store.transition('p-refuse', 'a', running, { ...running, status: 'aborted' }, token)).toBe(true);
    expect(await store.load('p-refuse')).toMatchObject({ cancelRequested: true, checkpoint: { steps: { a: { status: 'aborted' } } } });
  });
});

describe('what is not a checkpoint in the Redis checkpoint store', () => {
  it('fails a load of a garbage entry with CorruptCheckpointError naming the pipeline and the step', async () => {
    const store = open();
    const control = await admin();
    await control.hset('{fs:pipeline:p-garbage}:steps', 'a', '{not json');
    await control.hset('{fs:pipeline:p-shape}:steps', 'b', JSON.stringify({ status: 'flying' }));
    const garbage = await store.load('p-garbage').catch((caught: unknown) => caught);
    expect(isCorruptCheckpointError(garbage)).toBe(true);
    expect(garbage).toMatchObject({ code: 'CORRUPT_CHECKPOINT', pipelineId: 'p-garbage', step: 'a' });
    await expect(store.load('p-shape')).rejects.toMatchObject({ code: 'CORRUPT_CHECKPOINT', pipelineId: 'p-shape', step: 'b' });
    control.disconnect();
  });

  it('drops a message on a pipeline\'s channel that is not one of its changes, and tells the logger', async () => {
    const warnings: string[] = [];
    const store = createRedisCheckpointStore({ redis: `redis+unix://${server.socket}`, logger: { warn: (message) => warnings.push(message) } });
    stores.push(store);
    const writer = open();
    const control = await admin();
    const seen: CheckpointStoreEvent[] = [];
    const following = store.events('p-noise').subscribe((event) => seen.push(event));
    await expect.poll(() => subscribers(control, 'fs:pipeline:p-noise')).toBe(1);
    for (const noise of ['{not json', '{"type":"step","pipelineId":"p-noise","step":"a","entry":{"status":"flying"}}', '{"type":"cancel","pipelineId":"p-other"}']) {
      await control.publish('fs:pipeline:p-noise', noise);
    }
    await writer.requestCancel('p-noise');
    await expect.poll(() => seen).toEqual([{ type: 'cancel', pipelineId: 'p-noise' }]);
    expect(warnings.filter((warning) => warning.includes('dropped'))).toHaveLength(3);
    following.unsubscribe();
    control.disconnect();
  });
});

type RaceStep = 'a' | 'b' | 'c';
const RACE: PipelineDefinition<RaceStep> = { steps: { a: { canvasId: 'c-a' }, b: { canvasId: 'c-b' }, c: { canvasId: 'c-c', dependsOn: ['a'] } } };

describe('runPipeline on the Redis checkpoint store, cancelled', () => {
  it('resumes a pipeline cancelled in the store: starts none of its steps and aborts its running execution once', async () => {
    const { emulator, client } = await setup([task('c-first', { durationMs: 600_000 }), task('c-second'), task('c-third')], { rateLimit: false });
    const store = open();
    const { executionId } = await client.executions.start('c-first');
    const token = await store.claim('p-resume-cancelled');
    await store.transition('p-resume-cancelled', 'first', undefined, { status: 'starting', attempt: 1 }, token);
    await store.transition('p-resume-cancelled', 'first', { status: 'starting', attempt: 1 }, { status: 'running', executionId, attempt: 1 }, token);
    await store.requestCancel('p-resume-cancelled');
    const definition: PipelineDefinition<'first' | 'second' | 'third'> = {
      steps: { first: { canvasId: 'c-first' }, second: { canvasId: 'c-second' }, third: { canvasId: 'c-third', dependsOn: ['first'] } },
    };
    const last = await lastValueFrom(runPipeline(client, definition, { checkpoints: { store, pipelineId: 'p-resume-cancelled' } }));
    expect(last).toEqual({ type: 'finished', outcomes: { first: { status: 'aborted' }, second: { status: 'aborted' }, third: { status: 'aborted' } } });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).map((request) => request.executionId)).toEqual([executionId]);
    expect((await store.load('p-resume-cancelled'))?.checkpoint.steps).toEqual({ first: { status: 'aborted', executionId, attempt: 1 } });
  });

  it('starts a step only when its start was on record before the cancel, however the two cross (200 races)', async () => {
    const worker = open();
    const canceller = open();
    const watcher = await admin();
    let race = 0;
    let racesWithStarts = 0;
    await fc.assert(
      // When the cancel comes: before the pipeline is run, after some turns of the event loop (before the
      // claim, between any two of the worker's steps, or after a start), or once a start is on record.
      fc.asyncProperty(fc.oneof(fc.constant('before-run' as const), fc.integer({ min: 0, max: 40 }), fc.constant('after-a-start' as const)), async (moment) => {
        race += 1;
        const pipelineId = `p-race-${race}`;
        const channel = `fs:pipeline:${pipelineId}`;
        // Redis's own order of the pipeline's changes: a start on record, and the cancel.
        const order: string[] = [];
        const onMessage = (from: string, text: string): void => {
          if (from !== channel) return;
          const event = JSON.parse(text) as CheckpointStoreEvent;
          order.push(event.type === 'cancel' ? 'cancel' : `${event.step} ${event.entry.status}`);
        };
        watcher.on('message', onMessage);
        await watcher.subscribe(channel);
        const started: string[] = [];
        const aborted: string[] = [];
        const client = fakeClient({
          run: (canvasId) => {
            started.push(canvasId);
            return concat(of(startedEvent(`we-${pipelineId}-${canvasId}`)), new Observable<never>(() => () => aborted.push(canvasId)));
          },
        });
        if (moment === 'before-run') await canceller.requestCancel(pipelineId);
        const ended = lastValueFrom(runPipeline(client, RACE, { checkpoints: { store: worker, pipelineId } }));
        if (typeof moment === 'number') {
          for (let turn = 0; turn < moment; turn += 1) await new Promise((resolve) => setImmediate(resolve));
          await canceller.requestCancel(pipelineId);
        }
        if (moment === 'after-a-start') {
          await expect.poll(() => order.some((change) => change.endsWith(' starting'))).toBe(true);
          await canceller.requestCancel(pipelineId);
        }
        const last = await ended;
        await expect.poll(() => order).toContain('cancel');
        watcher.off('message', onMessage);
        await watcher.unsubscribe(channel);
        for (const canvasId of started) {
          const recorded = order.indexOf(`${canvasId.slice(2)} starting`);
          expect(recorded).toBeGreaterThanOrEqual(0);
          expect(recorded).toBeLessThan(order.indexOf('cancel'));
        }
        expect(aborted.sort()).toEqual([...started].sort());
        expect(last.type).toBe('finished');
        if (moment === 'before-run') expect(started).toEqual([]);
        if (started.length > 0) racesWithStarts += 1;
      }),
      { numRuns: 200 },
    );
    // Cancels of steps already started were among the races too.
    expect(racesWithStarts).toBeGreaterThan(0);
    watcher.disconnect();
  }, 60_000);
});

describe("the Redis checkpoint store's follower connection", () => {
  it('tells the logger once per outage, not once per retry, and prints nothing of its own', async () => {
    const lost: Readonly<Record<string, unknown>>[] = [];
    const store = createRedisCheckpointStore({
      redis: `redis+unix://${server.socket}`,
      logger: { warn: (message, meta) => message.includes('lost the connection') && lost.push(meta ?? {}) },
    });
    stores.push(store);
    const control = await admin();
    const printed = vi.spyOn(console, 'error');
    // Every connection attempt (ioredis opens them with net.createConnection), counted and let through.
    const net = createRequire(import.meta.url)('node:net') as { createConnection: (...args: unknown[]) => unknown };
    const attempts = vi.spyOn(net, 'createConnection');
    const following = store.events('p-outage').subscribe();
    try {
      await expect.poll(() => subscribers(control, 'fs:pipeline:p-outage')).toBe(1);
      for (const outage of [1, 2]) {
        const before = attempts.mock.calls.length;
        await unreachable(async () => {
          await control.client('KILL', 'TYPE', 'pubsub');
          // Several attempts to come back fail while the socket is away.
          await expect.poll(() => attempts.mock.calls.length - before, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
        });
        await expect.poll(() => subscribers(control, 'fs:pipeline:p-outage'), { timeout: 10_000 }).toBe(1);
        expect(lost).toHaveLength(outage);
      }
      expect(lost[0]).toMatchObject({ pipelineId: 'p-outage' });
      expect(printed.mock.calls.filter(([first]) => String(first).includes('[ioredis]'))).toEqual([]);
    } finally {
      following.unsubscribe();
      printed.mockRestore();
      attempts.mockRestore();
      control.disconnect();
    }
  });
});
