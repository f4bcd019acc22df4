import { Redis } from 'ioredis';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRedisCheckpointStore, type RedisCheckpointStore } from '../../src/redis/index.js';
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
