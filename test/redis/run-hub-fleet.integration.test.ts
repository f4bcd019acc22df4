import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock, type Emulator } from '../../src/emulator/index.js';
import type { WorkflowDefinition } from '../../src/emulator/workflows/definition.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunningProcess, scrubbedEnv, startProcess } from '../cli/support/child-process.js';
import { onceInOrder, type SeenEvent } from './hub-events.js';
import type { HubWorkerConfig } from './hub-worker.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

const WORKER = fileURLToPath(new URL('hub-worker.ts', import.meta.url));
const CANVAS = 'c-hub-fleet';
/** Two tasks one after the other, writing messages: 30 s of emulator time. */
const WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Two steps',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-a', parents: ['node-start'], durationMs: 15_000, messages: [{ content: 'first part' }, { content: 'second part' }] },
    { id: 'node-b', parents: ['node-a'], durationMs: 15_000, messages: [{ content: 'the end' }] },
  ],
};
const SPEED = 10;
/** 1.5 s of real time: a lease no stall of a loaded machine outlasts, so that nothing is taken over by mistake. */
const LEASE_MS = 15_000;
const POLL_MS = 1_000;
const EXECUTIONS = 20;
/** Real ms a worker may take, with room for a loaded machine. */
const WITHIN_MS = 60_000;

let server: RedisServer;
let accounts = 0;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

interface Fleet {
  readonly emulator: Emulator;
  readonly workers: readonly RunningProcess[];
  /** Starts `count` executions of the workflow (told apart by a variable: identical starts within a second are refused, service.md §2.2). */
  start(count: number): Promise<string[]>;
  afterEmulatorMs(ms: number): Promise<void>;
  /** Tells a worker which executions to follow. */
  follow(worker: RunningProcess, executionIds: readonly string[]): void;
  close(): Promise<void>;
}

/** An emulator on an accelerated clock and `size` worker processes, each ready to follow through the account's Redis hub. */
async function fleetOf(size: number, leaseMs: number): Promise<Fleet> {
  const clock = createScaledClock(SPEED);
  const emulator = await createEmulator({ clock, rateLimit: false, samples: false, workflows: [WORKFLOW] });
  const account = `hub-fleet-${process.pid}-${(accounts += 1)}`;
  const config: HubWorkerConfig = { socket: server.socket, account, baseUrl: emulator.url, apiKey: emulator.apiKey, speed: SPEED, realStart: clock.realStart, leaseMs, pollMs: POLL_MS };
  const spawn = (given: HubWorkerConfig): RunningProcess => startProcess(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(given)], { env: scrubbedEnv(), cwd: process.cwd(), stdin: 'pipe' });
  const workers = Array.from({ length: size }, () => spawn(config));
  const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS });
  let started = 0;
  try {
    await Promise.all(workers.map((worker) => worker.waitFor(/^ready$/mu, WITHIN_MS)));
  } catch (error) {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await emulator.close();
    throw error;
  }
  return {
    emulator,
    workers,
    start: (count) => Promise.all(Array.from({ length: count }, async () => (await starter.executions.start(CANVAS, { variables: { n: String((started += 1)) } })).executionId)),
    afterEmulatorMs: (ms) =>
      new Promise<void>((resolve) => {
        emulator.scheduler.schedule(resolve, ms);
      }),
    follow: (worker, executionIds) => {
      worker.child.stdin?.write(`${JSON.stringify(executionIds)}\n`);
    },
    close: async () => {
      for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await emulator.close();
    },
  };
}

/** What a worker printed: each execution's events with their places. */
function seenBy(worker: RunningProcess): Map<string, SeenEvent[]> {
  const seen = new Map<string, SeenEvent[]>();
  for (const line of worker.stdout().split('\n')) {
    if (!line.startsWith('{')) continue;
    const { executionId, seq, event } = JSON.parse(line) as { executionId: string; seq: number; event: RunEvent };
    seen.set(executionId, [...(seen.get(executionId) ?? []), { seq, event }]);
  }
  return seen;
}

/** How many requests about each execution a worker sent: at its end (`reads`), or when last asked (`sofar`). */
function readsBy(worker: RunningProcess, label: 'reads' | 'sofar'): Map<string, number> {
  return new Map([...worker.stdout().matchAll(new RegExp(`^${label} (\\S+) (\\d+)$`, 'gmu'))].map((match) => [match[1] ?? '', Number(match[2])]));
}

const places = (seen: readonly SeenEvent[] | undefined): string[] => (seen ?? []).map(({ seq, event }) => `${seq}:${event.type}`);

describe('createRedisRunHub across processes', () => {
  it('3 processes following the same 20 executions cost the service one poll stream each; after kill -9 of the lease holder another takes over within the lease; no follower misses or repeats an event', async () => {
    const fleet = await fleetOf(3, LEASE_MS);
    try {
      const [holder, ...others] = fleet.workers as [RunningProcess, RunningProcess, RunningProcess];
      const executionIds = await fleet.start(EXECUTIONS);
      // The holder follows first, so it polls every execution; the others then follow from the streams.
      fleet.follow(holder, executionIds);
      while (seenBy(holder).size < EXECUTIONS) await fleet.afterEmulatorMs(200);
      for (const worker of others) fleet.follow(worker, executionIds);
      await fleet.afterEmulatorMs(10_000);
      // One poll stream per execution: the two others have read nothing so far.
      for (const worker of others) fleet.follow(worker, ['report']);
      await Promise.all(others.map((worker) => worker.waitFor(/^reported$/mu, WITHIN_MS)));
      for (const worker of others) expect([...readsBy(worker, 'sofar').values()].filter((count) => count > 0)).toEqual([]);
      expect(seenBy(others[0]).size).toBe(EXECUTIONS);
      holder.child.kill('SIGKILL');
      const killedAt = fleet.emulator.clock.now();
      expect(await Promise.all(others.map((worker) => worker.exited(WITHIN_MS)))).toEqual([0, 0]);
      const seen = others.map(seenBy);
      const [readsOfB, readsOfC] = others.map((worker) => readsBy(worker, 'reads'));
      for (const executionId of executionIds) {
        for (const each of seen) expect(onceInOrder(each.get(executionId) ?? []), executionId).toBeUndefined();
        expect(places(seen[1]?.get(executionId))).toEqual(places(seen[0]?.get(executionId)));
        // Taken over by one of them, never both.
        expect([readsOfB?.get(executionId) ?? 0, readsOfC?.get(executionId) ?? 0].filter((count) => count > 0)).toHaveLength(1);
        const reads = fleet.emulator.requests.list({ executionId, endpoint: 'status' }).map((request) => request.emulatorTime);
        const after = reads.filter((time) => time > killedAt);
        // Taken over within a lease and a third (the checks' period) and a poll interval, with a loaded machine's slack (0.5 s).
        expect(Math.min(...after) - Math.max(...reads.filter((time) => time <= killedAt))).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 3 + POLL_MS + 5_000);
      }
    } finally {
      await fleet.close();
    }
  }, 90_000);
});
