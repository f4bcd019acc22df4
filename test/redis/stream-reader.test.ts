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

  it('skips an entry that is not an event (another writer, another version) and tells it, reading on: no unhandled rejection', async () => {
    const writer = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    const connection = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    const skipped: string[] = [];
    const reader = new StreamReader(connection, writer, '{u}:wake', asyncScheduler, () => undefined, (key, id) => skipped.push(`${key} ${id}`));
    const key = '{u}:events';
    try {
      await writer.xadd(key, '0-1', 'e', event(1));
      await writer.xadd(key, '0-2', 'e', 'not JSON');
      await writer.xadd(key, '0-3', 'x', event(3));
      await writer.xadd(key, '0-4', 'e', event(4));
      const seen: number[] = [];
      reader.follow(key, 0, (entries) => seen.push(...entries.map(([seq]) => seq)));
      while (!seen.includes(4)) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(seen).toEqual([1, 4]);
      expect(skipped).toEqual(['{u}:events 0-2', '{u}:events 0-3']);
      // The reader is still reading: a later entry comes too.
      await writer.xadd(key, '0-5', 'e', event(5));
      while (!seen.includes(5)) await new Promise((resolve) => setTimeout(resolve, 5));
    } finally {
      reader.close();
      writer.disconnect();
    }
  });
});
