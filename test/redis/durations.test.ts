import { Redis } from 'ioredis';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clockScheduler, createManualClock, driveClock } from '../../src/emulator/index.js';
import { isInvalidArgumentError } from '../../src/errors/index.js';
import { createRedisBudget, createRedisDurations, type RedisDurations, type RedisDurationsOptions } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

let server: RedisServer;
let raw: Redis;
let opened: { close(): Promise<void> }[] = [];
beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis({ path: server.socket });
  raw.on('error', () => undefined);
});
afterEach(async () => {
  await Promise.all(opened.map((handle) => handle.close()));
  opened = [];
});
afterAll(async () => {
  raw.disconnect();
  await server.close();
});

const url = (): string => `redis+unix://${server.socket}`;
const open = (account: string, options: Partial<RedisDurationsOptions> = {}): RedisDurations => {
  const durations = createRedisDurations({ redis: url(), account, ...options });
  opened.push(durations);
  return durations;
};
/** Resolves once `condition` holds on the model: checked at every change it shows, never on a timer. */
const until = (model: RedisDurations, condition: () => boolean): Promise<unknown> => firstValueFrom(model.state$.pipe(filter(() => condition())));
const field = (canvasId: string, nodeId: string): string => JSON.stringify([canvasId, nodeId]);
/** The channel's subscribers, as Redis counts them. */
const subscribers = async (account: string): Promise<string> => server.command('PUBSUB', 'NUMSUB', `fs:durations:${account}`);
/** A few turns of the event loop (no timers): what was about to settle has. */
const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}
function grownSince(baseline: ReadonlyMap<string, number>): Record<string, number> {
  const grown: Record<string, number> = {};
  for (const [kind, count] of resources()) if (count > (baseline.get(kind) ?? 0)) grown[kind] = count - (baseline.get(kind) ?? 0);
  return grown;
}

describe('learned durations shared through Redis', () => {
  it('gives a duration recorded by one process to the others of the account, and counts its own once', async () => {
    const a = open('acct-share');
    const b = open('acct-share');
    await Promise.all([a.ready, b.ready]);
    for (const ms of [10_000, 11_000, 12_000]) a.record('c-1', 'n-1', ms);
    // Local at once: estimates never wait for Redis.
    expect(a.estimate('c-1', 'n-1')).toMatchObject({ samples: 3, medianMs: 11_000 });
    await until(b, () => b.estimate('c-1', 'n-1') !== undefined);
    expect(b.estimate('c-1', 'n-1')).toEqual(a.estimate('c-1', 'n-1'));
    // B writes after its copy of A's third message: A receives its own three messages before this one.
    b.record('c-1', 'n-2', 5_000);
    await until(a, () => a.snapshot().nodes.some((node) => node.nodeId === 'n-2'));
    expect(a.estimate('c-1', 'n-1')?.samples).toBe(3);
  });

  it('loads what the account learned when a process starts, least recently written first', async () => {
    const a = open('acct-load');
    await a.ready;
    for (const ms of [1_000, 2_000, 3_000]) a.record('c-1', 'n-1', ms);
    for (const ms of [4_000, 5_000]) a.record('c-1', 'n-2', ms);
    await expect.poll(() => raw.hget('{fs:acct-load}:durations', field('c-1', 'n-2'))).toBe('[4000,5000]');
    const c = open('acct-load');
    await c.ready;
    expect(c.toJSON()).toEqual(a.toJSON());
    expect(c.toJSON().nodes.map((node) => node.nodeId)).toEqual(['n-1', 'n-2']);
    expect(c.estimate('c-1', 'n-1')).toMatchObject({ samples: 3, medianMs: 2_000 });
  });

  it('counts a duration recorded while the account is loading once, not again when the load brings it', async () => {
    const a = open('acct-once');
    for (const ms of [1_000, 2_000, 3_000]) a.record('c-1', 'n-1', ms);
    await a.ready;
    expect(a.estimate('c-1', 'n-1')?.samples).toBe(3);
  });

  it('skips the message of a write its load already brought, however late it comes', async () => {
    const b = open('acct-late-message');
    await b.ready;
    b.record('c-1', 'n-1', 1_000);
    await expect.poll(() => raw.hexists('{fs:acct-late-message}:durations', field('c-1', 'n-1'))).toBe(1);
    const seq = Number(await raw.zscore('{fs:acct-late-message}:durations:used', field('c-1', 'n-1')));
    const a = open('acct-late-message');
    await a.ready;
    expect(a.estimate('c-1', 'n-1')).toBeUndefined();
    // As if the subscription delivered B's message after the load's answer: in order, then a newer write.
    const message = (at: number, nodeId: string): string => JSON.stringify({ from: 'process-b', seq: at, canvasId: 'c-1', nodeId, samplesMs: [1_000] });
    await raw.publish('fs:durations:acct-late-message', message(seq, 'n-1'));
    await raw.publish('fs:durations:acct-late-message', message(seq + 1, 'n-probe'));
    await until(a, () => a.snapshot().nodes.some((node) => node.nodeId === 'n-probe'));
    expect(a.toJSON().nodes.find((node) => node.nodeId === 'n-1')?.samplesMs).toEqual([1_000]);
  });

  it('keeps in Redis the last `window` durations of a node and at most `maxNodes` nodes, the most recently written', async () => {
    const a = open('acct-bounds', { window: 4, maxNodes: 3 });
    await a.ready;
    for (let second = 1; second <= 10; second += 1) a.record('c-1', 'n-0', second * 1_000);
    await expect.poll(() => raw.hget('{fs:acct-bounds}:durations', field('c-1', 'n-0'))).toBe('[7000,8000,9000,10000]');
    for (const node of ['n-1', 'n-2', 'n-3', 'n-4', 'n-5']) a.record('c-1', node, 1_000);
    await expect.poll(() => raw.hexists('{fs:acct-bounds}:durations', field('c-1', 'n-5'))).toBe(1);
    const kept = [field('c-1', 'n-3'), field('c-1', 'n-4'), field('c-1', 'n-5')];
    expect((await raw.hkeys('{fs:acct-bounds}:durations')).sort()).toEqual(kept);
    expect(await raw.zrange('{fs:acct-bounds}:durations:used', 0, -1)).toEqual(kept);
    // A process with a smaller window loads no more than it keeps.
    const small = open('acct-bounds', { window: 2 });
    await small.ready;
    expect(small.toJSON().nodes.map((node) => node.samplesMs.length)).toEqual([1, 1, 1]);
  });

  it('shares an imported model, and writes nothing of what is not one', async () => {
    const a = open('acct-import');
    const b = open('acct-import');
    await Promise.all([a.ready, b.ready]);
    expect(() => {
      a.import({ version: 1, nodes: [{ canvasId: 'c-1', nodeId: 'n-bad', samplesMs: [-5] }] });
    }).toThrow(expect.objectContaining({ name: 'InvalidArgumentError' }));
    a.import({ version: 1, nodes: [{ canvasId: 'c-1', nodeId: 'n-1', samplesMs: [9_000, 10_000, 11_000] }] });
    await until(b, () => b.estimate('c-1', 'n-1') !== undefined);
    expect(b.estimate('c-1', 'n-1')).toMatchObject({ samples: 3, medianMs: 10_000 });
    expect(await raw.hkeys('{fs:acct-import}:durations')).toEqual([field('c-1', 'n-1')]);
  });

  it('refuses an import with a 5 MB canvas id: nothing of it is stored in Redis or sent to the other processes', async () => {
    const a = open('acct-huge');
    const b = open('acct-huge');
    await Promise.all([a.ready, b.ready]);
    expect(() => {
      a.import({ version: 1, nodes: [{ canvasId: `c-${'x'.repeat(5_000_000)}`, nodeId: 'n-1', samplesMs: [9_000] }] });
    }).toThrow(expect.objectContaining({ name: 'InvalidArgumentError' }));
    // A write after it goes through: had the huge one gone, it would be stored before this one.
    a.import({ version: 1, nodes: [{ canvasId: 'c-1', nodeId: 'n-1', samplesMs: [9_000] }] });
    await until(b, () => b.toJSON().nodes.length > 0);
    expect(b.toJSON().nodes.map((node) => node.canvasId)).toEqual(['c-1']);
    expect(await raw.hkeys('{fs:acct-huge}:durations')).toEqual([field('c-1', 'n-1')]);
  });

  it('starts a node afresh over a stored value that is not a list of durations', async () => {
    await raw.hset('{fs:acct-garbage}:durations', field('c-1', 'n-1'), 'not json');
    await raw.zadd('{fs:acct-garbage}:durations:used', 1, field('c-1', 'n-1'));
    const a = open('acct-garbage');
    await a.ready;
    expect(a.toJSON().nodes).toEqual([]);
    a.record('c-1', 'n-1', 1_000);
    await expect.poll(() => raw.hget('{fs:acct-garbage}:durations', field('c-1', 'n-1'))).toBe('[1000]');
  });

  it('keeps accounts apart: one sees nothing another learned', async () => {
    const x = open('acct-x');
    const y = open('acct-y');
    const z = open('acct-y');
    await Promise.all([x.ready, y.ready, z.ready]);
    x.record('c-1', 'n-x', 1_000);
    await expect.poll(() => raw.hexists('{fs:acct-x}:durations', field('c-1', 'n-x'))).toBe(1);
    // X's message went out with its write, before Z's: Y, had it been listening to X's account, would hold it first.
    z.record('c-1', 'n-probe', 1_000);
    await until(y, () => y.snapshot().nodes.length > 0);
    expect(y.snapshot().nodes.map((node) => node.nodeId)).toEqual(['n-probe']);
    const later = open('acct-y');
    await later.ready;
    expect(later.toJSON().nodes.map((node) => node.nodeId)).toEqual(['n-probe']);
    expect(await raw.keys('{fs:acct-y}:*')).not.toContain(expect.stringContaining('n-x'));
  });

  it('refuses an account name that looks like an API key, and bounds that are not', () => {
    expect(() => createRedisDurations({ redis: 'redis://127.0.0.1:1', account: 'rf_0123456789abcdef' })).toThrow(/API key/);
    let error: unknown;
    try {
      createRedisDurations({ redis: 'redis://127.0.0.1:1', account: 'acct-bad', window: 0 });
    } catch (caught) {
      error = caught;
    }
    expect(isInvalidArgumentError(error)).toBe(true);
  });

  it('leaves no subscription, timer or connection once closed, and keeps a client it was given open', async () => {
    const baseline = resources();
    const a = createRedisDurations({ redis: url(), account: 'acct-close' });
    await a.ready;
    a.record('c-1', 'n-1', 1_000);
    await expect.poll(() => raw.hexists('{fs:acct-close}:durations', field('c-1', 'n-1'))).toBe(1);
    expect(await subscribers('acct-close')).toMatch(/:1\r\n$/u);
    await a.close();
    await expect.poll(() => subscribers('acct-close')).toMatch(/:0\r\n$/u);
    // Counted outside `expect.poll`, whose own timers would count too.
    for (let turn = 0; turn < 1_000 && Object.keys(grownSince(baseline)).length > 0; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(grownSince(baseline)).toEqual({});

    const given = new Redis({ path: server.socket });
    const b = createRedisDurations({ redis: given, account: 'acct-close' });
    await b.ready;
    await b.close();
    expect(await given.ping()).toBe('PONG');
    given.disconnect();
  });

  it('ready resolves on close, and after unavailableAfterMs while Redis is unreachable; the load joins once Redis is back', async () => {
    await server.stop();
    let a: RedisDurations;
    try {
      const never = createRedisDurations({ redis: url(), account: 'acct-late' });
      await never.close();
      await never.ready;

      const clock = createManualClock();
      const start = clock.now();
      a = open('acct-late', { scheduler: clockScheduler(clock), unavailableAfterMs: 5_000 });
      let ready = false;
      void a.ready.then(() => (ready = true));
      await driveClock(clock, { until: () => ready });
      expect(clock.now() - start).toBeGreaterThanOrEqual(5_000);
      a.record('c-1', 'n-1', 1_000);
      expect(a.snapshot().nodes).toHaveLength(1);
    } finally {
      await server.restart();
    }
    const b = open('acct-late');
    await b.ready;
    for (const ms of [1_000, 2_000, 3_000]) b.record('c-1', 'n-2', ms);
    // Whether A's load or its subscription brings them, A learns them once.
    await until(a, () => a.estimate('c-1', 'n-2') !== undefined);
    expect(a.estimate('c-1', 'n-2')?.samples).toBe(3);
  });

  it('goes on learning locally while Redis is away: nothing rejects unhandled, the logger is told, close() does not wait', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const owned = open('acct-away');
      const given = new Redis({ path: server.socket, enableOfflineQueue: false });
      given.on('error', () => undefined);
      await new Promise((resolve) => given.once('ready', resolve));
      let told!: (message: string) => void;
      const warned = new Promise<string>((resolve) => {
        told = resolve;
      });
      const logger = {
        warn: (message: string): void => {
          if (message.includes('could not share')) told(message);
        },
      };
      const logged = createRedisDurations({ redis: given, account: 'acct-away', logger });
      await Promise.all([owned.ready, logged.ready]);
      // Once the given client knows Redis is gone, its commands fail at once (it has no offline queue).
      const noticed = new Promise((resolve) => given.once('close', resolve));
      await server.stop();
      await noticed;
      for (const ms of [10_000, 11_000, 12_000]) {
        owned.record('c-1', 'n-1', ms);
        logged.record('c-1', 'n-1', ms);
      }
      expect(owned.estimate('c-1', 'n-1')).toMatchObject({ samples: 3, medianMs: 11_000 });
      expect(logged.estimate('c-1', 'n-1')).toMatchObject({ samples: 3, medianMs: 11_000 });
      expect(await warned).toMatch(/could not share node durations/u);
      // Its writes wait for a Redis that is gone: closing drops them rather than wait.
      await owned.close();
      await logged.close();
      given.disconnect();
      await settle();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await server.restart();
    }
  });
});

describe('createRedisBudget(...).durations', () => {
  it('is the account’s shared model, with the bounds given, and is closed with the budget', async () => {
    const one = createRedisBudget({ redis: url(), account: 'acct-budget', durations: { window: 2 } });
    const two = createRedisBudget({ redis: url(), account: 'acct-budget' });
    const none = createRedisBudget({ redis: url(), account: 'acct-budget', durations: false });
    try {
      expect(none.durations).toBeUndefined();
      await Promise.all([one.durations?.ready, two.durations?.ready]);
      const first = one.durations!;
      const second = two.durations!;
      for (const ms of [1_000, 2_000, 3_000]) first.record('c-1', 'n-1', ms);
      await until(second, () => second.estimate('c-1', 'n-1') !== undefined);
      expect(second.estimate('c-1', 'n-1')?.samples).toBe(3);
      expect(await raw.hget('{fs:acct-budget}:durations', field('c-1', 'n-1'))).toBe('[2000,3000]');
      expect(await subscribers('acct-budget')).toMatch(/:2\r\n$/u);
      await one.close();
      await expect.poll(() => subscribers('acct-budget')).toMatch(/:1\r\n$/u);
    } finally {
      await Promise.all([one.close(), two.close(), none.close()]);
    }
    await expect.poll(() => subscribers('acct-budget')).toMatch(/:0\r\n$/u);
  });

  it('refuses bounds that are not, leaving nothing connected', async () => {
    const baseline = resources();
    expect(() => createRedisBudget({ redis: url(), account: 'acct-budget', durations: { maxNodes: 0 } })).toThrow(/maxNodes/);
    for (let turn = 0; turn < 1_000 && Object.keys(grownSince(baseline)).length > 0; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(grownSince(baseline)).toEqual({});
  });
});
