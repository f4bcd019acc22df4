import { filter, firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPipelineQueue, createPipelineWorker, type PipelineQueueEvent } from '../../src/bullmq/index.js';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { task } from '../pipeline/harness.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';
import { startRedisServer, type RedisServer } from '../redis/redis-server.js';
import { childrenOf, parentOf, recordTelemetry, type Recorded } from './support.js';

// A queued pipeline on a real redis-server, its worker's client reporting to the real SDK: the
// pipeline's span carries the BullMQ job it ran in.

let server: RedisServer;
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

describe('flowstream/otel with flowstream/bullmq', () => {
  it("names the BullMQ job on the pipeline's span and its steps', each step's run under its step", async () => {
    const emulator: Emulator = await createEmulator({ speed: 100, rateLimit: false, workflows: [task('c-first', { durationMs: 2_000 }), task('c-second', { durationMs: 2_000 })] });
    closing.push(() => emulator.close());
    const recorded: Recorded = recordTelemetry();
    closing.push(() => recorded.close());
    // The default 30 s deadline is 0.3 s of real time at speed 100: a loaded machine's loopback answer
    // passes it, and a start that timed out is not retried (it may have started), so the pipeline failed.
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler, polling: { minMs: 1_000, maxMs: 4_000 }, timeoutMs: REQUEST_TIMEOUT_MS, telemetry: recorded.telemetry });
    const connection = `redis+unix://${server.socket}`;
    const queue = createPipelineQueue({ connection, prefix: 'otel' });
    closing.push(() => queue.close());
    const worker = createPipelineWorker({
      connection,
      prefix: 'otel',
      client,
      definitions: { 'two-steps': { steps: { first: { canvasId: 'c-first' }, second: { canvasId: 'c-second', dependsOn: ['first'] } } } },
      concurrency: 1,
      pipeline: { scheduler: emulator.scheduler },
    });
    closing.push(() => worker.close());
    const finished = firstValueFrom(queue.events$('p-traced').pipe(filter((event: PipelineQueueEvent) => event.type === 'finished')));
    await queue.start('two-steps', undefined, { pipelineId: 'p-traced' });
    await finished;
    await expect.poll(() => recorded.spans().filter((span) => span.name === 'flowstream.pipeline').length).toBe(1);

    const spans = recorded.spans();
    const pipeline = spans.find((span) => span.name === 'flowstream.pipeline')!;
    expect(parentOf(pipeline)).toBeUndefined();
    expect(pipeline.attributes).toMatchObject({ 'flowstream.pipeline.name': 'two-steps', 'messaging.system': 'bullmq', 'messaging.message.id': 'p-traced', 'flowstream.pipeline.outcome': 'finished' });
    const steps = childrenOf(spans, pipeline);
    expect(steps.map((span) => [span.attributes['flowstream.step'], span.attributes['messaging.message.id']])).toEqual([
      ['first', 'p-traced'],
      ['second', 'p-traced'],
    ]);
    for (const step of steps) expect(childrenOf(spans, step).map((span) => span.name)).toEqual(['flowstream.run']);
  });
});
