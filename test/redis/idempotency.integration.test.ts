import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { StartInDoubtError } from '../../src/errors/start-in-doubt-error.js';
import { createRedisIdempotencyStore, type RedisIdempotencyStore } from '../../src/redis/index.js';
import { runResult } from '../../src/runs/events.js';
import { type RunningProcess, scrubbedEnv, startProcess } from '../cli/support/child-process.js';
import type { IdempotencyWorkerConfig } from './idempotency-worker.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

const WORKER = fileURLToPath(new URL('idempotency-worker.ts', import.meta.url));
const CANVAS = 'c-idempotent';
const ONE_TASK: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'One task',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 4_000, messages: [{ content: 'done' }] },
  ],
};
/** The emulator 20× faster: a run of the workflow takes a few hundred real ms. */
const SPEED = 20;
/** Real ms a worker may take to load and to end, with room for a loaded machine. */
const WITHIN_MS = 60_000;

let server: RedisServer;
let accounts = 0;
const nextAccount = (): string => `idempotency-${process.pid}-${(accounts += 1)}`;
/** Every worker the file needs, spawned at once (loading one takes seconds): each waits for its config. */
let workers: RunningProcess[] = [];
beforeAll(async () => {
  workers = Array.from({ length: 3 }, () => startProcess(process.execPath, ['--import', 'tsx', WORKER], { env: scrubbedEnv(), cwd: process.cwd(), stdin: 'pipe' }));
  server = await startRedisServer();
});
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await server.close();
});

async function emulatorOnLoopback(): Promise<Emulator> {
  return createEmulator({ clock: createScaledClock(SPEED), rateLimit: false, samples: false, workflows: [ONE_TASK] });
}

/** A worker spawned for the file, once it is loaded, given `config`: its runs start at once. */
async function configured(worker: RunningProcess | undefined, config: IdempotencyWorkerConfig): Promise<RunningProcess> {
  if (worker === undefined) throw new Error('no worker left');
  await worker.waitFor(/^ready$/mu, WITHIN_MS);
  worker.child.stdin?.write(`${JSON.stringify(config)}\n`);
  return worker;
}

describe('createRedisIdempotencyStore: one key across processes', () => {
  it('20 concurrent runs with one key over 3 processes (two workers and this one) start one execution, and all 20 follow it', async () => {
    const emulator = await emulatorOnLoopback();
    const base = { socket: server.socket, account: nextAccount(), baseUrl: emulator.url, apiKey: emulator.apiKey, canvasId: CANVAS, key: 'order-42', leaseMs: 15_000, pollMs: 50 };
    const fleet = workers.slice(0, 2);
    const store = createRedisIdempotencyStore({ redis: `redis+unix://${server.socket}`, account: base.account, leaseMs: base.leaseMs, pollMs: base.pollMs });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, budget: false, polling: { minMs: 50, maxMs: 200 }, idempotency: store });
      await Promise.all(fleet.map((worker) => configured(worker, { ...base, runs: 7 })));
      const here = await Promise.all(Array.from({ length: 6 }, () => runResult(client.run(CANVAS, {}, { idempotencyKey: base.key }))));
      const done = await Promise.all(
        fleet.map(async (worker) => {
          await worker.waitFor(/^done$/mu, WITHIN_MS);
          return worker.stdout();
        }),
      );
      const lines = [...done.flatMap((stdout) => stdout.split('\n').filter((line) => line.startsWith('result ') || line.startsWith('error '))), ...here.map((result) => `result ${result.executionId}`)];
      const executions = emulator.executions.list();
      expect(executions).toHaveLength(1);
      expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
      expect(lines).toEqual(Array.from({ length: 20 }, () => `result ${executions[0]!.executionId}`));
    } finally {
      await store.close();
      await emulator.close();
    }
  });

  it('a process killed between sending its start and recording the answer leaves the key in doubt: another process gets StartInDoubtError, and nothing starts twice', async () => {
    const emulator = await emulatorOnLoopback();
    // The start is held 1 s before the service handles it: the owner dies with its answer still to come.
    const held = emulator.faults.add({ kind: 'latency', ms: 1_000, endpoint: 'run', times: 1 });
    const account = nextAccount();
    const leaseMs = 500;
    let store: RedisIdempotencyStore | undefined;
    try {
      const owner = await configured(workers[2], { socket: server.socket, account, baseUrl: emulator.url, apiKey: emulator.apiKey, canvasId: CANVAS, key: 'order-43', runs: 1, leaseMs, pollMs: 50 });
      // Readiness only: the start has reached the service and waits there.
      await vi.waitFor(() => {
        expect(held.hits).toBe(1);
      }, { timeout: WITHIN_MS, interval: 20 });
      owner.child.kill('SIGKILL');
      await owner.exited();

      store = createRedisIdempotencyStore({ redis: `redis+unix://${server.socket}`, account, leaseMs, pollMs: 50 });
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, budget: false, idempotency: store });
      const error = await runResult(client.run(CANVAS, {}, { idempotencyKey: 'order-43' })).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StartInDoubtError);
      expect(error).toMatchObject({ code: 'START_IN_DOUBT', key: 'order-43' });

      // The owner's start is still handled by the service: one execution, one start, never a second.
      await vi.waitFor(() => {
        expect(emulator.executions.list()).toHaveLength(1);
      }, { timeout: WITHIN_MS, interval: 50 });
      expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    } finally {
      await store?.close();
      await emulator.close();
    }
  });

  it('keys of two accounts never meet', async () => {
    const emulator = await emulatorOnLoopback();
    const stores = [nextAccount(), nextAccount()].map((account) => createRedisIdempotencyStore({ redis: `redis+unix://${server.socket}`, account }));
    try {
      const clients = stores.map((idempotency) => createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, budget: false, polling: { minMs: 50, maxMs: 200 }, idempotency }));
      const [a, b] = await Promise.all(clients.map((client, index) => runResult(client.run(CANVAS, { variables: { n: String(index) } }, { idempotencyKey: 'shared-name' }))));
      expect(a?.executionId).not.toBe(b?.executionId);
      expect(emulator.executions.list()).toHaveLength(2);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await emulator.close();
    }
  });
});
