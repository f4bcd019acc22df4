import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock, type Emulator } from '../../src/emulator/index.js';
import { createRedisRunHub, type RedisRunHub } from '../../src/redis/index.js';
import { createRunRelay, type RunRelay } from '../../src/relay/run-relay.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { task } from '../pipeline/harness.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

/**
 * A viewer cancels through a relay whose run hub is in Redis while that Redis is frozen (SIGSTOP):
 * the relay's follow of the execution hears nothing until Redis answers, but the abort must not wait
 * for it — an execution left running spends credits (service.md §3.5).
 */
const SPEED = 20;
const SECRET = 'the relay cancel test secret, thirty-two bytes or more';

let server: RedisServer;
let emulator: Emulator | undefined;
let hub: RedisRunHub | undefined;
let redis: Redis | undefined;
beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  server.resume();
  await hub?.close();
  redis?.disconnect();
  await emulator?.close();
});
afterAll(async () => {
  await server.close();
});

/** An emulator 20× faster, a client and relay on a Redis run hub of `account`, an execution of a long task, its token, and a cancel of it. */
async function relayOnRedisHub(account: string): Promise<{ em: Emulator; relay: RunRelay; executionId: string; token: string; cancel: () => Promise<Response> }> {
  const em = await createEmulator({ clock: createScaledClock(SPEED), rateLimit: false, samples: false, workflows: [task('c-long', { durationMs: 10 * 60_000 })] });
  emulator = em;
  redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  hub = createRedisRunHub({ redis, account, leaseMs: 5_000, scheduler: em.scheduler });
  const client = createClient({ apiKey: em.apiKey, baseUrl: em.url, fetch: em.fetch, scheduler: em.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS, hub });
  const tokens = createRunTokens({ secret: SECRET, scheduler: em.scheduler });
  const relay = createRunRelay({ client, tokens, scheduler: em.scheduler });
  const { executionId } = await client.executions.start('c-long');
  const token = await tokens.sign({ executionId, scope: ['read', 'cancel'], ttlMs: 3_600_000 });
  const cancel = (): Promise<Response> => relay.fetch(new Request(`http://relay.test/executions/${executionId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }));
  return { em, relay, executionId, token, cancel };
}

describe('a cancel through the relay while the Redis of its run hub is frozen', () => {
  it('aborts the execution at once, exactly once, and answers the aborted result once Redis is back', async () => {
    const { em, executionId, cancel } = await relayOnRedisHub('acct-relay-cancel');
    server.pause();
    const answer = cancel();
    // The abort reaches the service while Redis is still frozen (waited for as a real event, bounded).
    await vi.waitFor(() => {
      expect(em.executions.get(executionId)?.status).toBe('failed');
    }, { timeout: 10_000, interval: 10 });
    expect(em.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);

    server.resume();
    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ executionId, status: 'failed', endedBy: 'aborted' });
    expect(em.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
  }, 30_000);

  it('answers the aborted result read from the service while Redis stays frozen', async () => {
    const { em, relay, executionId, cancel } = await relayOnRedisHub('acct-relay-cancel-frozen');
    server.pause();
    // Awaited as a real event: without an answer while Redis is frozen, the test's own timeout ends it.
    const response = await cancel();
    expect(response.status).toBe(200);
    const result = (await response.json()) as Record<string, unknown>;
    expect(result).toMatchObject({ executionId, status: 'failed', endedBy: 'aborted', failedNodes: [expect.objectContaining({ nodeId: 'node-task' })] });
    expect(em.executions.get(executionId)?.status).toBe('failed');
    expect(em.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
    relay.close();
  }, 30_000);

  it('answers the aborted result while Redis stays frozen after the relay\'s follow had heard the execution', async () => {
    const { em, relay, executionId, token, cancel } = await relayOnRedisHub('acct-relay-cancel-stalled');
    const stream = await relay.fetch(new Request(`http://relay.test/executions/${executionId}/events?token=${token}`));
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let heard = '';
    while (!heard.includes('event: started')) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`The stream ended before the execution's first event: ${heard}`);
      heard += value;
    }

    server.pause();
    const response = await cancel();
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ executionId, status: 'failed', endedBy: 'aborted' });
    expect(em.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
    await reader.cancel();
    relay.close();
  }, 30_000);
});
