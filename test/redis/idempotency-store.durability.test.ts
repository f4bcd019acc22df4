import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';
import { createRedisIdempotencyStore, type RedisIdempotencyStore } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/*
 * Idempotency keys are only as durable as Redis (README, "A fleet of processes"): what the store says
 * when Redis lost them or may evict them, on a real redis-server that saves nothing.
 */

const TTL_MS = 3_600_000;

let server: RedisServer;
const stores: RedisIdempotencyStore[] = [];
beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await server.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
});
afterAll(async () => {
  await server.close();
});

function store(account: string, warn = vi.fn()): RedisIdempotencyStore {
  const made = createRedisIdempotencyStore({ redis: `redis+unix://${server.socket}`, account, scheduler: clockScheduler(createManualClock()), logger: { warn } });
  stores.push(made);
  return made;
}

describe('createRedisIdempotencyStore when Redis loses its keys', () => {
  it('tells its logger that Redis lost the keys after a restart with nothing saved: a key recorded before is free again', async () => {
    const warn = vi.fn();
    const keys = store('acct-lost-keys', warn);
    const first = await keys.claim('invoice-1', TTL_MS);
    if (first.kind !== 'start') throw new Error(`expected a start, got ${first.kind}`);
    await keys.record('invoice-1', first.token, 'we-000000000000000000000001');
    expect(await keys.claim('invoice-1', TTL_MS)).toEqual({ kind: 'follow', executionId: 'we-000000000000000000000001' });
    await server.stop({ crash: true });
    await server.restart();
    // The key is gone with Redis's data: the store cannot know it was recorded, and says that keys were lost.
    expect((await keys.claim('invoice-1', TTL_MS)).kind).toBe('start');
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('lost the idempotency keys'), { account: 'acct-lost-keys' });
  });

  it('says nothing while Redis keeps its keys, however many claims', async () => {
    const warn = vi.fn();
    const keys = store('acct-kept-keys', warn);
    for (const key of ['a', 'b', 'c']) expect((await keys.claim(key, TTL_MS)).kind).toBe('start');
    expect(warn).not.toHaveBeenCalled();
  });

  it('warns once when Redis\'s maxmemory-policy may evict keys (volatile-lru, the default of several managed Redis)', async () => {
    await server.command('CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru');
    const warn = vi.fn();
    const keys = store('acct-evicting', warn);
    await keys.claim('x', TTL_MS);
    await keys.claim('y', TTL_MS);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('maxmemory-policy is volatile-lru'), { policy: 'volatile-lru' });
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('claims as usual when its logger throws (a logger failing must not fail a claim Redis took)', async () => {
    await server.command('CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru');
    const keys = store('acct-throwing-logger', vi.fn(() => {
      throw new Error('the logger is down');
    }));
    expect((await keys.claim('x', TTL_MS)).kind).toBe('start');
    expect((await keys.claim('y', TTL_MS)).kind).toBe('start');
  });
});
