import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clockScheduler, createManualClock, type ManualClock } from '../../src/emulator/index.js';
import { createRedisIdempotencyStore, type RedisIdempotencyStore } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/*
 * A Redis outage while the owner of a key settles it, on a manual clock. The owner's client fails
 * its commands while Redis is unreachable (`enableOfflineQueue: false`), as a client configured to
 * fail fast does; Redis restarts from a snapshot taken before the outage, as a persisted Redis would.
 */

const TTL_MS = 60_000;
const POLL_MS = 100;
const LEASE_MS = 3_000;
/** Real ms for Redis and the client to be ready again (readiness only: no outcome depends on it). */
const WITHIN_MS = 10_000;

let server: RedisServer;
const closing: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  for (const close of closing.splice(0)) await close();
  await server.close();
});

/** Resolves or rejects with `settling`, moving the clock to its next timer while it waits. */
async function settled<T>(clock: ManualClock, settling: Promise<T>): Promise<T> {
  let outcome: { readonly value: T } | { readonly error: unknown } | undefined;
  settling.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  const current = (): typeof outcome => outcome;
  const deadline = Date.now() + WITHIN_MS;
  while (current() === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const next = clock.nextTimerAt();
    if (current() === undefined && next !== undefined) clock.advance(Math.max(0, next - clock.now()));
  }
  const done = current();
  if (done === undefined) throw new Error('still waiting');
  if ('error' in done) throw done.error;
  return done.value;
}

async function ready(client: Redis): Promise<void> {
  const deadline = Date.now() + WITHIN_MS;
  while (client.status !== 'ready') {
    if (Date.now() > deadline) throw new Error(`the client is ${client.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function owner(clock: ManualClock, account: string, warn = vi.fn()): { store: RedisIdempotencyStore; client: Redis } {
  const client = new Redis({ path: server.socket, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  const store = createRedisIdempotencyStore({ redis: client, account, scheduler: clockScheduler(clock), pollMs: POLL_MS, leaseMs: LEASE_MS, logger: { warn } });
  closing.push(() => store.close(), () => client.quit().catch(() => undefined));
  return { store, client };
}

describe('RedisIdempotencyStore during a Redis outage', () => {
  it('records the execution once Redis is back within the lease, and a later run with the key follows it', async () => {
    const clock = createManualClock();
    const account = `outage-${process.pid}-1`;
    const { store, client } = owner(clock, account);
    await ready(client);
    const claim = await store.claim('k', TTL_MS);
    if (claim.kind !== 'start') throw new Error(`expected start, got ${claim.kind}`);
    await server.command('SAVE');
    await server.stop();
    const recording = store.record('k', claim.token, 'we-1');
    recording.catch(() => undefined);
    await server.restart();
    await ready(client);
    await settled(clock, recording);

    const later = createRedisIdempotencyStore({ redis: `redis+unix://${server.socket}`, account, scheduler: clockScheduler(clock), pollMs: POLL_MS, leaseMs: LEASE_MS });
    closing.push(() => later.close());
    expect(await settled(clock, later.claim('k', TTL_MS))).toEqual({ kind: 'follow', executionId: 'we-1' });
  });

  it('gives up, and says so, once the lease may have run out with Redis still unreachable', async () => {
    const clock = createManualClock();
    const warn = vi.fn();
    const { store, client } = owner(clock, `outage-${process.pid}-2`, warn);
    await ready(client);
    const claim = await store.claim('k', TTL_MS);
    if (claim.kind !== 'start') throw new Error(`expected start, got ${claim.kind}`);
    await server.stop();
    try {
      const startedAt = clock.now();
      await expect(settled(clock, store.record('k', claim.token, 'we-1'))).rejects.toThrow();
      expect(clock.now() - startedAt).toBeGreaterThanOrEqual(LEASE_MS - LEASE_MS / 3);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('could not record an idempotency key in Redis; giving up'), expect.objectContaining({ key: 'k' }));
    } finally {
      await server.restart();
    }
  });
});
