import { Redis } from 'ioredis';
import { asyncScheduler } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamReader } from '../../src/redis/run-hub.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

const event = (n: number): string => JSON.stringify({ type: 'status', executionId: 'we-1', status: 'executing', n });

describe('StreamReader', () => {
  it('a stream followed afresh while a read of its old place is on its way gets every entry from its new place, none skipped', async () => {
    const writer = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    const connection = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    const reader = new StreamReader(connection, writer, '{t}:wake', asyncScheduler, () => undefined);
    const key = '{t}:events';
    try {
      for (let seq = 1; seq <= 3; seq += 1) await writer.xadd(key, `0-${seq}`, 'e', event(seq));
      const first: number[] = [];
      reader.follow(key, 3, (entries) => first.push(...entries.map(([seq]) => seq)));
      // Readiness only: the reader's XREAD from 0-3 is blocked in Redis.
      while (!(await writer.call('CLIENT', 'LIST') as string).includes('cmd=xread')) await new Promise((resolve) => setTimeout(resolve, 5));
      // An entry that answers that read, and in the same task the stream followed afresh from its start
      // (its last follower left and a new one came): the answer to the old read comes after.
      void writer.xadd(key, '0-4', 'e', event(4));
      reader.unfollow(key);
      const again: number[] = [];
      reader.follow(key, 0, (entries) => again.push(...entries.map(([seq]) => seq)));
      // Its first delivery (one read from its start brings all four).
      while (again.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(again).toEqual([1, 2, 3, 4]);
      expect(first).toEqual([]);
    } finally {
      reader.close();
      writer.disconnect();
    }
  });
});
