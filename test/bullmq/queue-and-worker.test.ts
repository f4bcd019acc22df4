import { link, rename } from 'node:fs/promises';
import { Queue, type Telemetry } from 'bullmq';
import { Redis } from 'ioredis';
import { filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPipelineQueue, createPipelineWorker, isPipelineJobFailedError, type PipelineJobProgress, type PipelineQueue, type PipelineQueueEvent, type PipelineWorker } from '../../src/bullmq/index.js';
import type { Client } from '../../src/client.js';
import type { Logger } from '../../src/domain/model.js';
import type { Emulator } from '../../src/emulator/index.js';
import { PIPELINE_QUEUE_NAME } from '../../src/bullmq/pipeline-job.js';
import { isCorruptCheckpointError } from '../../src/pipeline/corrupt-checkpoint-error.js';
import { createRedisCheckpointStore } from '../../src/redis/checkpoint-store.js';
import type { PipelineDefinition } from '../../src/pipeline/pipeline-definition.js';
import { setup, task } from '../pipeline/harness.js';
import { startRedisServer, type RedisServer } from '../redis/redis-server.js';

// One process: the queue and an in-process worker on a real redis-server, the emulator at SPEED 100.
// The fleet of worker processes (crash, SIGTERM, cancel from elsewhere, load) is in workers.integration.test.ts.

type Step = 'first' | 'second';
const WORKFLOWS = [
  task('c-first', { durationMs: 2_000 }),
  task('c-second', { durationMs: 60_000 }),
  task('c-broken', { durationMs: 1_000, failure: { kind: 'error', errors: ['no luck'] } }),
  // Ten minutes: 6 s of real time at SPEED 100, far longer than any outage of these tests.
  task('c-long', { durationMs: 600_000 }),
];
const TWO_STEPS: PipelineDefinition<Step> = { steps: { first: { canvasId: 'c-first' }, second: { canvasId: 'c-second', dependsOn: ['first'] } } };

let server: RedisServer;
let prefixes = 0;
const closing: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});
afterAll(async () => {
  await server.close();
});

/** A queue and a worker of their own prefix (so each test has its own queue), on the test's emulator. */
async function fleet(options: { readonly worker?: boolean; readonly logger?: Logger; readonly telemetry?: Telemetry } = {}): Promise<{ emulator: Emulator; client: Client; queue: PipelineQueue; prefix: string; startWorker: () => PipelineWorker }> {
  const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
  prefixes += 1;
  const connection = `redis+unix://${server.socket}`;
  const prefix = `t${prefixes}`;
  const logging = { ...(options.logger === undefined ? {} : { logger: options.logger }), ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }) };
  const queue = createPipelineQueue({ connection, prefix, ...logging });
  closing.push(() => queue.close());
  const startWorker = (): PipelineWorker => {
    const worker = createPipelineWorker({
      connection,
      prefix,
      client,
      definitions: {
        'two-steps': TWO_STEPS,
        'long-then-second': { steps: { first: { canvasId: 'c-long' }, second: { canvasId: 'c-second', dependsOn: ['first'] } } },
        broken: (input: { retry: number }) => ({ steps: { only: { canvasId: 'c-broken', retry: input.retry } } }),
      },
      concurrency: 2,
      pipeline: { scheduler: emulator.scheduler },
      ...logging,
    });
    closing.push(() => worker.close());
    return worker;
  };
  if (options.worker !== false) startWorker();
  return { emulator, client, queue, prefix, startWorker };
}

/** Resolves once a follower of the pipeline listens on Redis: from then on, no change can pass it by. */
async function listening(prefix: string, pipelineId: string): Promise<void> {
  await expect.poll(() => server.command('PUBSUB', 'NUMSUB', `fs:pipeline:${prefix}:${pipelineId}`)).toMatch(/:[1-9]\d*\r\n$/u);
}

const finished = (queue: PipelineQueue, pipelineId: string) =>
  firstValueFrom(queue.events$(pipelineId).pipe(filter((event): event is Extract<PipelineQueueEvent, { type: 'finished' }> => event.type === 'finished'))).then((event) => event.result);

describe('a pipeline queue and its worker (flowstream/bullmq)', () => {
  it('runs a pipeline a worker knows by name, and tells every step as it moves, then the result', async () => {
    const { emulator, queue, prefix } = await fleet();
    const all = lastValueFrom(queue.events$('p-run').pipe(toArray()));
    await listening(prefix, 'p-run');
    const pipelineId = await queue.start('two-steps', undefined, { pipelineId: 'p-run' });
    expect(pipelineId).toBe('p-run');
    const events = await all;
    const moves = events.flatMap((event) => (event.type === 'step' ? [`${event.step} ${event.entry.status}`] : []));
    expect(moves).toEqual(['first starting', 'first running', 'first finish', 'second starting', 'second running', 'second finish']);
    const result = events.at(-1);
    expect(result).toMatchObject({ type: 'finished', result: { pipelineId, status: 'finish', steps: { first: { status: 'finish', attempt: 1 }, second: { status: 'finish', attempt: 1 } } } });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(2);
  });

  it('runs a pipeline once however often it is started, even after it finished', async () => {
    const { emulator, queue } = await fleet();
    const ids = await Promise.all([queue.start('two-steps', undefined, { pipelineId: 'p-once' }), queue.start('two-steps', undefined, { pipelineId: 'p-once' })]);
    expect(ids).toEqual(['p-once', 'p-once']);
    expect((await finished(queue, 'p-once')).status).toBe('finish');
    await queue.start('two-steps', undefined, { pipelineId: 'p-once' });
    // A late follower gets where the steps stand (in the store's order), then the result from the queue.
    const late = await lastValueFrom(queue.events$('p-once').pipe(toArray()));
    expect(late.slice(0, 2).map((event) => (event.type === 'step' ? `${event.step} ${event.entry.status}` : event.type)).sort()).toEqual(['first finish', 'second finish']);
    expect(late.at(-1)).toMatchObject({ type: 'finished', result: { status: 'finish' } });
    expect(late).toHaveLength(3);
    expect(emulator.requests.list({ endpoint: 'run', canvasId: 'c-first' })).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'run', canvasId: 'c-second' })).toHaveLength(1);
  });

  it('generates a pipeline id, and refuses one BullMQ cannot take as a job id', async () => {
    const { queue } = await fleet({ worker: false });
    expect(await queue.start('two-steps')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u);
    await expect(queue.start('two-steps', undefined, { pipelineId: 'a:b' })).rejects.toThrow(/must not contain ":"/u);
    await expect(queue.start('two-steps', undefined, { pipelineId: '42' })).rejects.toThrow(/whole number/u);
    await expect(queue.start('two-steps', undefined, { pipelineId: '' })).rejects.toThrow(/non-empty/u);
  });

  it('refuses null start options, a definition name that is not one and input JSON cannot hold with InvalidArgumentError, adding no job', async () => {
    const { queue, prefix } = await fleet({ worker: false });
    await expect(queue.start('two-steps', undefined, null as never)).rejects.toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    await expect(queue.start(undefined as never)).rejects.toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'definitionName' }));
    await expect(queue.start('')).rejects.toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'definitionName' }));
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    for (const input of [{ count: 1n }, cyclic]) await expect(queue.start('two-steps', input)).rejects.toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'input' }));
    const jobs = new Queue(PIPELINE_QUEUE_NAME, { connection: { path: server.socket }, prefix });
    expect(await jobs.getJobCounts()).toEqual(expect.objectContaining({ waiting: 0, active: 0 }));
    await jobs.close();
  });

  it('retries a failed step as its definition says, each time a new start', async () => {
    const { emulator, queue } = await fleet();
    const pipelineId = await queue.start('broken', { retry: 2 });
    const result = await finished(queue, pipelineId);
    expect(result).toMatchObject({ status: 'failed', steps: { only: { status: 'failed', attempt: 3, error: { name: 'WorkflowFailedError' } } } });
    expect(emulator.requests.list({ endpoint: 'run', canvasId: 'c-broken' })).toHaveLength(3);
  });

  it('never starts a pipeline cancelled before a worker took it', async () => {
    const { emulator, queue, startWorker } = await fleet({ worker: false });
    const pipelineId = await queue.start('two-steps');
    await queue.cancel(pipelineId);
    const events = lastValueFrom(queue.events$(pipelineId).pipe(toArray()));
    startWorker();
    const all = await events;
    expect(all.map((event) => event.type)).toEqual(['cancel', 'finished']);
    expect(all.at(-1)).toMatchObject({ result: { status: 'cancelled', steps: { first: { status: 'aborted' }, second: { status: 'aborted' } } } });
    expect(emulator.requests.list({ endpoint: ['run', 'abort'] })).toEqual([]);
  });

  it('hands a pipeline back on detach without aborting anything; cancelled meanwhile, the next worker aborts its running execution once', async () => {
    const { emulator, queue, startWorker } = await fleet({ worker: false });
    const first = startWorker();
    const pipelineId = await queue.start('two-steps');
    const running = await firstValueFrom(queue.events$(pipelineId).pipe(filter((event) => event.type === 'step' && event.step === 'second' && event.entry.status === 'running')));
    const executionId = running.type === 'step' ? running.entry.executionId! : '';
    await first.detach();
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(emulator.executions.get(executionId)?.status).toBe('executing');
    await queue.cancel(pipelineId);
    const result = finished(queue, pipelineId);
    startWorker();
    expect(await result).toMatchObject({ status: 'cancelled', steps: { first: { status: 'finish' }, second: { status: 'aborted', executionId } } });
    expect(emulator.requests.list({ endpoint: 'abort' }).map((request) => request.executionId)).toEqual([executionId]);
    expect(emulator.requests.list({ endpoint: 'run', canvasId: 'c-second' })).toHaveLength(1);
  });

  it('fails the job of a pipeline no worker knows, and tells its followers why', async () => {
    const { queue } = await fleet();
    const pipelineId = await queue.start('nobody-knows-me');
    const error = await lastValueFrom(queue.events$(pipelineId)).catch((caught: unknown) => caught);
    expect(isPipelineJobFailedError(error)).toBe(true);
    expect(error).toMatchObject({ pipelineId, reason: 'this worker knows no pipeline definition named "nobody-knows-me"', code: 'PIPELINE_JOB_FAILED' });
  });
});

describe('a cancel while Redis is away (flowstream/bullmq)', () => {
  it('cancels a pipeline whose worker was away when the cancel was asked, Redis restarted meanwhile: its running step aborted once, the next never started', async () => {
    const { emulator, queue, prefix } = await fleet();
    const pipelineId = await queue.start('long-then-second');
    const running = await firstValueFrom(queue.events$(pipelineId).pipe(filter((event) => event.type === 'step' && event.step === 'first' && event.entry.status === 'running')));
    const executionId = running.type === 'step' ? running.entry.executionId! : '';
    // Another process asks for the cancel, through a path of its own to the same Redis.
    const alias = `${server.socket}.canceller`;
    const canceller = createPipelineQueue({ connection: `redis+unix://${alias}`, prefix });
    closing.push(() => canceller.close());
    // Redis goes down (its data saved) and the cancel is asked meanwhile.
    await server.command('SHUTDOWN', 'SAVE');
    const cancelled = canceller.cancel(pipelineId);
    await server.restart();
    // Back, but only for the canceller until the cancel is on record: the worker's follower cannot hear it.
    await rename(server.socket, alias);
    const control = new Redis({ path: alias });
    // A follower that came back before the socket moved is sent away again.
    await control.client('KILL', 'TYPE', 'pubsub');
    await cancelled;
    control.disconnect();
    await link(alias, server.socket);
    const result = await finished(queue, pipelineId);
    expect(result).toMatchObject({ status: 'cancelled', steps: { first: { status: 'aborted', executionId }, second: { status: 'aborted' } } });
    // The abort leaves as the step is let go of, not before the pipeline's end is told.
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).map((request) => request.executionId)).toEqual([executionId]);
    expect(emulator.requests.list({ endpoint: 'run', canvasId: 'c-second' })).toEqual([]);
  });
});

describe('a follower of the queue while Redis is away (flowstream/bullmq)', () => {
  it('tells the steps and the cancel published while its connection was away, once it is back', async () => {
    const { queue, prefix } = await fleet({ worker: false });
    const storedId = `${prefix}:p-away`;
    // A worker's store, connected before the outage.
    const store = createRedisCheckpointStore({ redis: `redis+unix://${server.socket}` });
    closing.push(() => store.close());
    const token = await store.claim(storedId);
    const seen: string[] = [];
    const following = queue.events$('p-away').subscribe((event) => seen.push(event.type === 'step' ? `${event.step} ${event.entry.status}` : event.type));
    await listening(prefix, 'p-away');
    const control = new Redis({ path: server.socket });
    await control.ping();
    const away = `${server.socket}.away`;
    await rename(server.socket, away);
    try {
      // The follower's connection drops and cannot come back while the step moves and the cancel is asked.
      await control.client('KILL', 'TYPE', 'pubsub');
      await expect.poll(() => control.pubsub('NUMSUB', `fs:pipeline:${storedId}`)).toEqual([`fs:pipeline:${storedId}`, 0]);
      await store.transition(storedId, 'first', undefined, { status: 'starting', attempt: 1 }, token);
      await store.requestCancel(storedId);
    } finally {
      await rename(away, server.socket);
    }
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(['first starting', 'cancel']);
    following.unsubscribe();
    control.disconnect();
  });
});

describe('a cancel right after a start (flowstream/bullmq)', () => {
  it('starts no step whose start was not on record before the cancel, when the cancel follows the start by 1 to 7 ms (16 races)', async () => {
    const { emulator, queue, prefix } = await fleet();
    const watcher = new Redis({ path: server.socket });
    const delays = [1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 1, 4];
    for (const [race, delayMs] of delays.entries()) {
      const pipelineId = `p-race-${race}`;
      const channel = `fs:pipeline:${prefix}:${pipelineId}`;
      // Redis's own order of the pipeline's changes: a start on record, and the cancel.
      const order: string[] = [];
      const onMessage = (from: string, text: string): void => {
        if (from !== channel) return;
        const event = JSON.parse(text) as { type: string; step?: string; entry?: { status: string } };
        order.push(event.type === 'cancel' ? 'cancel' : `${event.step} ${event.entry?.status}`);
      };
      watcher.on('message', onMessage);
      await watcher.subscribe(channel);
      const startsBefore = emulator.requests.list({ endpoint: 'run' }).length;
      await queue.start('long-then-second', undefined, { pipelineId });
      // The race's input, not its outcome: how long after the start the cancel is asked.
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await queue.cancel(pipelineId);
      const result = await finished(queue, pipelineId);
      await expect.poll(() => order).toContain('cancel');
      watcher.off('message', onMessage);
      await watcher.unsubscribe(channel);
      const starts = emulator.requests.list({ endpoint: 'run' }).length - startsBefore;
      expect(result.status).toBe('cancelled');
      if (starts === 0) continue;
      // A start that reached the service was on record before the cancel.
      expect(starts).toBe(1);
      expect(order.indexOf('first starting')).toBeGreaterThanOrEqual(0);
      expect(order.indexOf('first starting')).toBeLessThan(order.indexOf('cancel'));
    }
    watcher.disconnect();
  }, 60_000);
});

describe('what is not a checkpoint (flowstream/bullmq)', () => {
  it("drops a garbage message on a pipeline's channel: the worker and the queue's follower tell their logger and go on", async () => {
    const warnings: string[] = [];
    const { queue, prefix } = await fleet({ logger: { warn: (message) => warnings.push(message) } });
    const pipelineId = await queue.start('long-then-second');
    const events = lastValueFrom(queue.events$(pipelineId).pipe(toArray()));
    await firstValueFrom(queue.events$(pipelineId).pipe(filter((event) => event.type === 'step' && event.step === 'first' && event.entry.status === 'running')));
    const control = new Redis({ path: server.socket });
    expect(await control.publish(`fs:pipeline:${prefix}:${pipelineId}`, '{not json')).toBeGreaterThanOrEqual(2);
    control.disconnect();
    // The worker's follower and the queue's.
    await expect.poll(() => warnings.filter((warning) => warning.includes('dropped')).map((warning) => warning.split(':')[0]).sort()).toEqual(['checkpoint store', 'pipeline queue']);
    await queue.cancel(pipelineId);
    const all = await events;
    expect(all.at(-1)).toMatchObject({ type: 'finished', result: { status: 'cancelled', steps: { first: { status: 'aborted' } } } });
  });

  it('fails the job of a pipeline whose stored checkpoint is corrupt, naming the pipeline, and starts nothing', async () => {
    const { emulator, queue, prefix } = await fleet();
    const control = new Redis({ path: server.socket });
    await control.hset(`{fs:pipeline:${prefix}:p-corrupt}:steps`, 'first', '{not json');
    control.disconnect();
    await queue.start('two-steps', undefined, { pipelineId: 'p-corrupt' });
    // The worker fails the job; a follower reading where the steps stand fails the same way.
    const jobs = new Queue(PIPELINE_QUEUE_NAME, { connection: { path: server.socket }, prefix });
    closing.push(() => jobs.close());
    await expect.poll(() => jobs.getJobState('p-corrupt')).toBe('failed');
    expect((await jobs.getJob('p-corrupt'))?.failedReason).toBe(`The stored checkpoint of pipeline ${prefix}:p-corrupt is corrupt: step first: not JSON`);
    const error = await lastValueFrom(queue.events$('p-corrupt')).catch((caught: unknown) => caught);
    expect(isCorruptCheckpointError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CORRUPT_CHECKPOINT', pipelineId: `${prefix}:p-corrupt`, step: 'first' });
    expect(emulator.requests.list({ endpoint: 'run' })).toEqual([]);
  });
});

/** BullMQ's telemetry interface, recording the names of the spans BullMQ starts (context: a plain object). */
function recordingTelemetry(): { readonly telemetry: Telemetry; readonly spans: string[] } {
  const spans: string[] = [];
  const context = {};
  const telemetry: Telemetry = {
    tracer: {
      startSpan: (name) => {
        spans.push(name);
        return { setSpanOnContext: (ctx: unknown) => ctx, setAttribute: () => undefined, setAttributes: () => undefined, addEvent: () => undefined, recordException: () => undefined, end: () => undefined };
      },
    },
    contextManager: { with: (_ctx, fn) => fn() as never, active: () => context, getMetadata: () => '', fromMetadata: (active) => active as never },
  };
  return { telemetry, spans };
}

describe('pipeline jobs as BullMQ shows them', () => {
  const jobsOf = (prefix: string) => {
    const connection = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    const queue = new Queue(PIPELINE_QUEUE_NAME, { connection, prefix });
    closing.push(async () => {
      await queue.close();
      connection.disconnect();
    });
    return queue;
  };

  it('reports each step\'s state, execution and nodes as the job\'s progress, for queue.getJobs and bull-board', async () => {
    const { queue, prefix } = await fleet();
    const bull = jobsOf(prefix);
    const pipelineId = await queue.start('long-then-second', undefined, { pipelineId: 'p-progress' });
    // While the first step runs: it has its execution and its nodes, the second waits.
    await expect.poll(async () => ((await bull.getJobs(['active']))[0]?.progress as PipelineJobProgress | undefined)?.steps['first']?.nodes.total ?? 0, { timeout: 10_000 }).toBeGreaterThan(0);
    const [active] = await bull.getJobs(['active']);
    const running = active?.progress as PipelineJobProgress;
    expect(running).toMatchObject({ done: 0, total: 2, steps: { first: { state: 'running', executionId: expect.stringMatching(/^we-/u) as unknown }, second: { state: 'waiting', nodes: { done: 0, total: 0 } } } });
    await queue.cancel(pipelineId);
    expect((await finished(queue, pipelineId)).status).toBe('cancelled');
    const [ended] = await bull.getJobs(['completed']);
    expect(ended?.progress).toMatchObject({ done: 2, total: 2, steps: { first: { state: 'aborted', executionId: running.steps['first']?.executionId }, second: { state: 'aborted', nodes: { total: 0 } } } });
  });

  it('shows a finished pipeline\'s steps finished, with every node done', async () => {
    const { queue, prefix } = await fleet();
    const bull = jobsOf(prefix);
    const pipelineId = await queue.start('two-steps');
    const result = await finished(queue, pipelineId);
    const progress = (await bull.getJob(pipelineId))?.progress as PipelineJobProgress;
    expect(progress).toMatchObject({ done: 2, total: 2 });
    for (const step of ['first', 'second'] as const) {
      expect(progress.steps[step]).toMatchObject({ state: 'finish', executionId: result.steps[step]?.executionId });
      expect(progress.steps[step]?.nodes.total).toBeGreaterThan(0);
      expect(progress.steps[step]?.nodes).toMatchObject({ done: progress.steps[step]?.nodes.total, failed: 0 });
    }
  });

  it('passes BullMQ\'s telemetry option on to the queue and the worker', async () => {
    const { telemetry, spans } = recordingTelemetry();
    const { queue } = await fleet({ telemetry });
    const pipelineId = await queue.start('two-steps');
    await finished(queue, pipelineId);
    expect(spans).toContain(`add ${PIPELINE_QUEUE_NAME}.two-steps`);
    expect(spans).toContain(`process ${PIPELINE_QUEUE_NAME}`);
  });
});
