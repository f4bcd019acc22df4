import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipelineQueue } from '../../src/bullmq/index.js';
import { startRedisServer, type RedisServer } from '../redis/redis-server.js';

// A pipeline queue used after close(), on a real redis-server: every method says the queue is closed
// with a typed error, rather than ioredis's "Connection is closed".

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

const QUEUE_CLOSED: unknown = expect.objectContaining({ name: 'FlowstreamError', code: 'QUEUE_CLOSED', message: 'The pipeline queue is closed' });

describe('a pipeline queue after close() (flowstream/bullmq)', () => {
  it('refuses start, cancel and events$ with QUEUE_CLOSED, and a second close() does nothing', async () => {
    const queue = createPipelineQueue({ connection: `redis+unix://${server.socket}`, prefix: 'closed-1' });
    const pipelineId = await queue.start('report', { topic: 'tides' });
    await queue.close();
    await expect(queue.start('report', { topic: 'tides' })).rejects.toEqual(QUEUE_CLOSED);
    await expect(queue.cancel(pipelineId)).rejects.toEqual(QUEUE_CLOSED);
    await expect(firstValueFrom(queue.events$(pipelineId))).rejects.toEqual(QUEUE_CLOSED);
    await expect(queue.close()).resolves.toBeUndefined();
  });

  it('refuses start and cancel called while it closes, and ends a follower subscribed before with the same error', async () => {
    const queue = createPipelineQueue({ connection: `redis+unix://${server.socket}`, prefix: 'closed-2' });
    const pipelineId = await queue.start('report');
    const following = firstValueFrom(queue.events$(pipelineId)).catch((error: unknown) => error);
    const closed = queue.close();
    await expect(queue.start('report')).rejects.toEqual(QUEUE_CLOSED);
    await expect(queue.cancel(pipelineId)).rejects.toEqual(QUEUE_CLOSED);
    await closed;
    expect(await following).toEqual(QUEUE_CLOSED);
  });
});
