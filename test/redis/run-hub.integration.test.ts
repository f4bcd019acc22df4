import { Redis } from 'ioredis';
import type { Subscription } from 'rxjs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock, type Emulator } from '../../src/emulator/index.js';
import type { WorkflowDefinition } from '../../src/emulator/workflows/definition.js';
import { createRedisRunHub, type RedisRunHub } from '../../src/redis/index.js';
import type { RunEvent } from '../../src/runs/events.js';
import { hubPlaceOf } from '../../src/runs/run-hub.js';
import { onceInOrder, type SeenEvent } from './hub-events.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

const CANVAS = 'c-hub';
/** Three tasks one after the other, each writing two messages: about 30 s of emulator time. */
const WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Three steps',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-a', parents: ['node-start'], durationMs: 10_000, messages: [{ content: 'alpha one' }, { content: 'alpha two' }] },
    { id: 'node-b', parents: ['node-a'], durationMs: 10_000, messages: [{ content: 'beta one' }, { content: 'beta two' }] },
    { id: 'node-c', parents: ['node-b'], durationMs: 10_000, messages: [{ content: 'gamma' }] },
  ],
};
const SPEED = 25;
/**
 * 0.48 s of real time: a lease a loaded machine's stall of the event loop does not outlast, for the
 * tests where a lease passing on by mistake would be a failure (a test of takeover waits for it).
 */
const LEASE_MS = 12_000;
/** 24 s of real time, for the tests where nobody dies: no stall passes the poll to the other process. */
const LONG_LEASE_MS = 600_000;
const POLLING = { minMs: 1_000, maxMs: 1_000 };

let server: RedisServer;
let accounts = 0;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

/** One process's side of the fleet: its Redis connection, hub and client, all on the emulator's clock. */
function processOn(emulator: Emulator, account: string, leaseMs = LEASE_MS): { readonly redis: Redis; readonly hub: RedisRunHub; readonly client: ReturnType<typeof createClient>; readonly requests: () => number } {
  const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  const hub = createRedisRunHub({ redis, account, leaseMs, scheduler: emulator.scheduler });
  // The requests this process sent, as the service got them.
  let sent = 0;
  const counting: typeof fetch = (input, init) => {
    sent += 1;
    return emulator.fetch(input, init);
  };
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: counting, scheduler: emulator.scheduler, budget: false, polling: POLLING, timeoutMs: REQUEST_TIMEOUT_MS, hub });
  return { redis, hub, client, requests: () => sent };
}

/** Follows `executionId` with `client.watch`, keeping each event with its place in the hub's sequence. */
function follow(client: ReturnType<typeof createClient>, executionId: string): { readonly seen: SeenEvent[]; readonly done: Promise<void>; readonly subscription: Subscription } {
  const seen: SeenEvent[] = [];
  let subscription!: Subscription;
  const done = new Promise<void>((resolve, reject) => {
    subscription = client.watch(executionId, { failOnWorkflowError: false }).subscribe({
      next: (event) => seen.push({ seq: hubPlaceOf(event)?.seq ?? -1, event }),
      error: reject,
      complete: resolve,
    });
  });
  return { seen, done, subscription };
}

/** Starts `count` executions of the workflow (told apart by a variable: identical starts within a second are refused, service.md §2.2). */
async function startExecutions(client: ReturnType<typeof createClient>, count: number): Promise<[string, ...string[]]> {
  const ids = await Promise.all(Array.from({ length: count }, async (_, n) => (await client.executions.start(CANVAS, { variables: { n: String(n) } })).executionId));
  return ids as [string, ...string[]];
}

const reads = (emulator: Emulator, executionId: string): number => emulator.requests.list().filter((request) => request.executionId === executionId && (request.endpoint === 'status' || request.endpoint === 'output')).length;

/**
 * The shortest time between two status reads of an execution (emulator ms). One poll stream waits
 * `polling.minMs` after each answer before it reads again, whatever the machine's load; two streams
 * interleave, and one of each two of their gaps is at most half a poll interval.
 */
const shortestReadGap = (emulator: Emulator, executionId: string): number => {
  const times = emulator.requests.list({ executionId, endpoint: 'status' }).map((request) => request.emulatorTime);
  return Math.min(...times.slice(1).map((time, n) => time - times[n]!));
};

describe('createRedisRunHub: one poll stream per execution across processes', () => {
  it('polls each execution once for the followers of two hubs, who get every event once, in order, at the same places', async () => {
    const emulator = await createEmulator({ clock: createScaledClock(SPEED), rateLimit: false, samples: false, workflows: [WORKFLOW] });
    const account = `hub-${process.pid}-${(accounts += 1)}`;
    const [a, b] = [processOn(emulator, account, LONG_LEASE_MS), processOn(emulator, account, LONG_LEASE_MS)];
    const alone = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, polling: POLLING, timeoutMs: REQUEST_TIMEOUT_MS });
    try {
      const [lone, ...shared] = await startExecutions(alone, 3);
      const follows = shared.flatMap((executionId) => [follow(a.client, executionId), follow(b.client, executionId), follow(b.client, executionId)]);
      const reference = follow(alone, lone);
      await Promise.all([...follows.map((each) => each.done), reference.done]);
      for (const each of follows) expect(onceInOrder(each.seen)).toBeUndefined();
      // Both processes saw the same events at the same places (the late local follower from its snapshot on).
      expect(follows[0]!.seen.map(({ seq, event }) => `${seq}:${event.type}`)).toEqual(follows[1]!.seen.map(({ seq, event }) => `${seq}:${event.type}`));
      // A finished stream is kept for keepMs (default one hour, Redis's clock), then expires.
      for (const executionId of shared) {
        const ttl = await a.redis.pttl(`{fs:${account}:hub:${executionId}}:events`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(3_600_000);
      }
      // One poll stream each: its reads never closer than the poll interval (a count compared with the
      // lone execution's would vary with each read's latency, which a loaded machine stretches).
      for (const executionId of shared) expect(shortestReadGap(emulator, executionId)).toBeGreaterThanOrEqual(POLLING.minMs);
    } finally {
      await Promise.all([a.hub.close(), b.hub.close()]);
      a.redis.disconnect();
      b.redis.disconnect();
      await emulator.close();
    }
  }, 20_000);

  it('when the lease holder dies (its connection cut, its poll gone), a follower in another process takes over within the lease, and misses or repeats nothing (property over kill points)', async () => {
    const emulator = await createEmulator({ clock: createScaledClock(SPEED), rateLimit: false, samples: false, workflows: [WORKFLOW] });
    const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS });
    const afterEmulatorMs = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        emulator.scheduler.schedule(resolve, ms);
      });
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 500, max: 28_000 }), async (killAfterMs) => {
          const account = `hub-${process.pid}-${(accounts += 1)}`;
          const [holder, other] = [processOn(emulator, account), processOn(emulator, account)];
          try {
            const [executionId] = await startExecutions(starter, 1);
            const first = follow(holder.client, executionId);
            // The holder polls first; the other process follows it from the stream.
            while (first.seen.length === 0) await afterEmulatorMs(100);
            const second = follow(other.client, executionId);
            await afterEmulatorMs(killAfterMs);
            const killedAt = emulator.clock.now();
            // As kill -9 leaves it: the lease is not handed back, the poll is gone.
            holder.redis.disconnect();
            first.subscription.unsubscribe();
            await second.done;
            expect(onceInOrder(second.seen)).toBeUndefined();
            expect(second.seen.at(-1)?.event).toMatchObject({ type: 'finished', result: { status: 'finish' } });
            const readTimes = emulator.requests.list().filter((request) => request.executionId === executionId && request.endpoint === 'status').map((request) => request.emulatorTime);
            const before = Math.max(...readTimes.filter((time) => time <= killedAt));
            const after = readTimes.filter((time) => time > killedAt);
            // Taken over within a lease and a third (the checks' period), and a poll interval; the rest is a loaded machine's slack.
            // (No read after the kill: the holder had read the end already.)
            if (after.length > 0) expect(Math.min(...after) - before).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 3 + POLLING.maxMs + 3_000);
          } finally {
            await Promise.all([holder.hub.close(), other.hub.close()]);
            holder.redis.disconnect();
            other.redis.disconnect();
          }
        }),
        { numRuns: 4 },
      );
    } finally {
      await emulator.close();
    }
  }, 60_000);

  it("a run started through the hub leads: followers in another process read its events and poll nothing; when it detaches, one of them takes over at once", async () => {
    const emulator = await createEmulator({ clock: createScaledClock(SPEED), rateLimit: false, samples: false, workflows: [WORKFLOW] });
    const account = `hub-${process.pid}-${(accounts += 1)}`;
    const [runner, watcher] = [processOn(emulator, account), processOn(emulator, account)];
    const afterEmulatorMs = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        emulator.scheduler.schedule(resolve, ms);
      });
    try {
      const detach = new AbortController();
      const ran: RunEvent[] = [];
      const run = runner.client.run(CANVAS, {}, { detach: detach.signal }).subscribe((event) => ran.push(event));
      while (ran.length === 0) await afterEmulatorMs(100);
      const executionId = ran[0]!.executionId;
      const watched = follow(watcher.client, executionId);
      await afterEmulatorMs(12_000);
      expect(watched.seen.length).toBeGreaterThan(2);
      // The watcher's process sent nothing: the run's reads are all the service got (one poll stream).
      expect(watcher.requests()).toBe(0);
      expect(runner.requests()).toBe(reads(emulator, executionId) + 1);
      detach.abort();
      const detachedAt = emulator.clock.now();
      await watched.done;
      run.unsubscribe();
      expect(onceInOrder(watched.seen)).toBeUndefined();
      const readTimes = emulator.requests.list({ executionId, endpoint: 'status' }).map((request) => request.emulatorTime);
      // Handed back, not left to run out: taken over within one check of the lease.
      expect(Math.min(...readTimes.filter((time) => time > detachedAt)) - detachedAt).toBeLessThanOrEqual(LEASE_MS / 3 + 3_000);
      expect(watcher.requests()).toBeGreaterThan(0);
    } finally {
      await Promise.all([runner.hub.close(), watcher.hub.close()]);
      runner.redis.disconnect();
      watcher.redis.disconnect();
      await emulator.close();
    }
  }, 20_000);

  it('an execution Redis refused to open is opened again with the next check: its followers get every event once Redis takes the command', async () => {
    // One short task: the test is about the opening, not the run.
    const short: WorkflowDefinition = { ...WORKFLOW, nodes: [{ id: 'node-start', type: 'start' }, { id: 'node-a', parents: ['node-start'], durationMs: 2_000, messages: [{ content: 'alpha' }] }] };
    const emulator = await createEmulator({ clock: createScaledClock(SPEED), rateLimit: false, samples: false, workflows: [short] });
    const account = `hub-${process.pid}-${(accounts += 1)}`;
    const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
    const warnings: string[] = [];
    const hub = createRedisRunHub({ redis, account, leaseMs: LEASE_MS, scheduler: emulator.scheduler, logger: { warn: (message) => warnings.push(message) } });
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, polling: POLLING, timeoutMs: REQUEST_TIMEOUT_MS, hub });
    const afterEmulatorMs = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        emulator.scheduler.schedule(resolve, ms);
      });
    try {
      const [executionId] = await startExecutions(client, 1);
      // The execution's state key of the wrong type: Redis refuses the hub's scripts on it.
      const stateKey = `{fs:${account}:hub:${executionId}}:state`;
      await redis.set(stateKey, 'not a hash');
      const followed = follow(client, executionId);
      while (!warnings.some((message) => message.includes('could not open'))) await afterEmulatorMs(100);
      await redis.del(stateKey);
      let timedOut = false;
      await Promise.race([followed.done, afterEmulatorMs(60_000).then(() => (timedOut = true))]);
      expect(timedOut).toBe(false);
      expect(onceInOrder(followed.seen)).toBeUndefined();
      expect(followed.seen.at(-1)?.event).toMatchObject({ type: 'finished', result: { status: 'finish' } });
    } finally {
      await hub.close();
      redis.disconnect();
      await emulator.close();
    }
  }, 20_000);

  it('while Redis is frozen, followers wait; once it answers, the events held meanwhile come, each once and in order', async () => {
    const emulator = await createEmulator({ clock: createScaledClock(SPEED), rateLimit: false, samples: false, workflows: [WORKFLOW] });
    const account = `hub-${process.pid}-${(accounts += 1)}`;
    const [a, b] = [processOn(emulator, account), processOn(emulator, account)];
    const afterEmulatorMs = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        emulator.scheduler.schedule(resolve, ms);
      });
    try {
      const [executionId] = await startExecutions(a.client, 1);
      const [first, second] = [follow(a.client, executionId), follow(b.client, executionId)];
      while (first.seen.length === 0) await afterEmulatorMs(100);
      server.pause();
      const seenBefore = second.seen.length;
      // Longer than a lease: when Redis answers again, the lease may pass to the other process.
      await afterEmulatorMs(LEASE_MS * 2);
      expect(second.seen.length).toBe(seenBefore);
      server.resume();
      await Promise.all([first.done, second.done]);
      for (const each of [first, second]) expect(onceInOrder(each.seen)).toBeUndefined();
    } finally {
      server.resume();
      await Promise.all([a.hub.close(), b.hub.close()]);
      a.redis.disconnect();
      b.redis.disconnect();
      await emulator.close();
    }
  }, 20_000);
});
