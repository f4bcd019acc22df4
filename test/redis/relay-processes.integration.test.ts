import { fileURLToPath } from 'node:url';
import { firstValueFrom, tap, timeout, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock, type Emulator } from '../../src/emulator/index.js';
import type { WorkflowDefinition } from '../../src/emulator/workflows/definition.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { connectRun } from '../../src/runs/connect-run.js';
import type { ConnectionEvent } from '../../src/runs/events.js';
import { type RunningProcess, scrubbedEnv, startProcess } from '../cli/support/child-process.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';
import { onceInOrder } from './hub-events.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import type { RelayWorkerConfig } from './relay-worker.js';

const WORKER = fileURLToPath(new URL('relay-worker.ts', import.meta.url));
const CANVAS = 'c-relay-processes';
/**
 * Two tasks one after the other, writing messages: 75 s of emulator time. The second is long so that the
 * poll stream after the takeover has many reads to check, however late a loaded machine lets it begin
 * (a second of real stall is 10 s here; with 15 s it had 3 reads left in a fresh-clone CI).
 */
const WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Two steps',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-a', parents: ['node-start'], durationMs: 15_000, messages: [{ content: 'first part' }, { content: 'second part' }] },
    { id: 'node-b', parents: ['node-a'], durationMs: 60_000, messages: [{ content: 'the end' }] },
  ],
};
const SPEED = 10;
const SECRET = 'the relay processes test secret, thirty-two bytes or more';
/** 1.5 s of real time: a lease no stall of a loaded machine outlasts. */
const LEASE_MS = 15_000;
const POLL_MS = 1_000;
const HEARTBEAT_MS = 3_000;
/** Real ms a process may take to start, with room for a loaded machine. */
const WITHIN_MS = 60_000;
/** Emulator ms the whole viewing may take: the run's 75 s, a lease to take over, and plenty of room. */
const VIEWING_MS = 180_000;

let server: RedisServer;
let accounts = 0;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

/** An emulator on an accelerated clock and two relay processes of one app, sharing the account's Redis run hub. */
async function twoRelays(): Promise<{ readonly emulator: Emulator; readonly relays: readonly [RunningProcess, RunningProcess]; readonly ports: readonly string[]; readonly close: () => Promise<void> }> {
  const clock = createScaledClock(SPEED);
  const emulator = await createEmulator({ clock, rateLimit: false, samples: false, workflows: [WORKFLOW] });
  const config: RelayWorkerConfig = { socket: server.socket, account: `relay-processes-${process.pid}-${(accounts += 1)}`, baseUrl: emulator.url, apiKey: emulator.apiKey, speed: SPEED, realStart: clock.realStart, leaseMs: LEASE_MS, pollMs: POLL_MS, secret: SECRET, heartbeatMs: HEARTBEAT_MS };
  const relays = [0, 1].map(() => startProcess(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], { env: scrubbedEnv(), cwd: process.cwd() })) as [RunningProcess, RunningProcess];
  const close = async (): Promise<void> => {
    for (const relay of relays) {
      relay.child.kill('SIGCONT');
      relay.child.kill('SIGKILL');
    }
    await emulator.close();
  };
  try {
    const ports = await Promise.all(relays.map(async (relay) => (await relay.waitFor(/^listening (\d+)$/mu, WITHIN_MS))[1] ?? ''));
    return { emulator, relays, ports, close };
  } catch (error) {
    await close();
    throw error;
  }
}

describe('a viewer of a relay process that stops answering', () => {
  it('notices the silence (no heartbeat), resumes on the other process after its last id, and gets every event once, in order, from one poll stream', async () => {
    const { emulator, relays, ports, close } = await twoRelays();
    try {
      const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS });
      const { executionId } = await starter.executions.start(CANVAS);
      const token = await createRunTokens({ secret: SECRET, scheduler: emulator.scheduler }).sign({ executionId, scope: ['read'], ttlMs: 3_600_000 });
      // A load balancer in front of the two: the first process until it is frozen, then the other.
      let serving = 0;
      const balanced: typeof fetch = (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.port = ports[serving] ?? '';
        return fetch(url, init);
      };
      let resumedAt: number | undefined;
      const events = await firstValueFrom(
        connectRun(`http://127.0.0.1:1/executions/${executionId}/events`, { token, fetch: balanced, scheduler: emulator.scheduler, failOnWorkflowError: false }).pipe(
          tap((event) => {
            if (serving === 0 && event.type === 'message') {
              // The process the viewer reads (and which polls the execution) freezes: its sockets stay open, silent.
              relays[0].child.kill('SIGSTOP');
              serving = 1;
            } else if (serving === 1 && resumedAt === undefined && event.type === 'node') {
              // News after the freeze: the other process took the lease over. The frozen one comes back.
              relays[0].child.kill('SIGCONT');
              resumedAt = emulator.clock.now();
            }
          }),
          toArray(),
          timeout({ first: VIEWING_MS, scheduler: emulator.scheduler }),
        ),
      );
      const seen = events.filter((event) => event.type !== 'connection').map((event, index) => ({ seq: index + 1, event }));
      expect(onceInOrder(seen)).toBeUndefined();
      expect(events.filter((event): event is ConnectionEvent => event.type === 'connection').map((event) => event.reconnecting?.error)).toEqual(['no heartbeat from the relay', undefined]);
      // The process that came back polls no more (past the one read it may have had under way): one poll stream.
      const reads = emulator.requests.list({ executionId, endpoint: 'status' }).map((request) => request.emulatorTime).filter((time) => time > (resumedAt ?? 0) + POLL_MS);
      const gaps = reads.slice(1).map((time, index) => time - (reads[index] ?? 0));
      expect(reads.length).toBeGreaterThan(3);
      expect(Math.min(...gaps)).toBeGreaterThan(POLL_MS / 2);
    } finally {
      await close();
    }
  }, 60_000);
});
