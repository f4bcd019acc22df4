import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createScaledClock, type Emulator } from '../../src/emulator/index.js';
import type { WorkflowDefinition } from '../../src/emulator/workflows/definition.js';
import { createRedisRunHub, type RedisRunHub } from '../../src/redis/index.js';
import { createRunRelay, type RunRelay } from '../../src/relay/run-relay.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import type { RunResult } from '../../src/domain/model.js';
import type { RunEvent } from '../../src/runs/events.js';
import type { RunState } from '../../src/runs/run-state.js';
import { onceInOrder, type SeenEvent } from './hub-events.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

const CANVAS = 'c-hub-relay';
const WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Two steps',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-a', parents: ['node-start'], durationMs: 8_000, messages: [{ content: 'first part' }, { content: 'second part' }] },
    { id: 'node-b', parents: ['node-a'], durationMs: 8_000, messages: [{ content: 'the end' }] },
  ],
};
const SECRET = 'the hub relay test secret, thirty-two bytes or more';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

/** One process of an app: its hub in Redis, its client, and its relay. */
function appProcess(emulator: Emulator, account: string, maxLen?: number): { readonly redis: Redis; readonly hub: RedisRunHub; readonly relay: RunRelay } {
  const redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  const hub = createRedisRunHub({ redis, account, leaseMs: 5_000, scheduler: emulator.scheduler, ...(maxLen === undefined ? {} : { maxLen }) });
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, polling: { minMs: 1_000, maxMs: 1_000 }, timeoutMs: REQUEST_TIMEOUT_MS, hub });
  const relay = createRunRelay({ client, tokens: createRunTokens({ secret: SECRET, scheduler: emulator.scheduler }), scheduler: emulator.scheduler });
  return { redis, hub, relay };
}

/** Closes the processes' relays, hubs and connections, then the emulator. */
async function closeAll(processes: readonly ReturnType<typeof appProcess>[], emulator: Emulator): Promise<void> {
  for (const each of processes) each.relay.close();
  await Promise.all(processes.map(({ hub }) => hub.close()));
  for (const each of processes) each.redis.disconnect();
  await emulator.close();
}

/** Reads a relay's event stream: each event with its id, until `enough` says so or the stream ends. */
async function readEvents(response: Response, enough: (seen: readonly SeenEvent[]) => boolean = () => false): Promise<SeenEvent[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const seen: SeenEvent[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return seen;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: (\d+)$/mu.exec(frame)?.[1];
      const data = /^data: (.*)$/mu.exec(frame)?.[1];
      if (id !== undefined && data !== undefined) {
        // A snapshot's data is the RunState it stands for (its name is the frame's `event:`).
        const parsed = JSON.parse(data) as RunEvent | RunState;
        const snapshot = /^event: snapshot$/mu.test(frame);
        seen.push({ seq: Number(id), event: snapshot ? { type: 'snapshot', executionId: (parsed as RunState).executionId ?? '', state: parsed as RunState } : (parsed as RunEvent) });
      }
      end = buffer.indexOf('\n\n');
    }
    if (enough(seen)) {
      await reader.cancel();
      return seen;
    }
  }
}

describe('relays of several processes on one Redis run hub', () => {
  it('give each event the same id in every process: a viewer resumes on another process after its Last-Event-ID, missing and repeating nothing', async () => {
    const emulator = await createEmulator({ clock: createScaledClock(25), rateLimit: false, samples: false, workflows: [WORKFLOW] });
    const account = `hub-relay-${process.pid}`;
    const [first, second] = [appProcess(emulator, account), appProcess(emulator, account)];
    try {
      const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS });
      const { executionId } = await starter.executions.start(CANVAS);
      const token = await createRunTokens({ secret: SECRET, scheduler: emulator.scheduler }).sign({ executionId, scope: ['read'], ttlMs: 600_000 });
      const url = `http://relay.test/executions/${executionId}/events`;
      const headers = { authorization: `Bearer ${token}` };
      // A viewer of the whole run on the second process, for reference.
      const whole = readEvents(await second.relay.fetch(new Request(url, { headers })));
      const answer = await first.relay.fetch(new Request(url, { headers }));
      const before = await readEvents(answer, (seen) => seen.some(({ event }) => event.type === 'message'));
      const lastId = before.at(-1)!.seq;
      const resumed = await second.relay.fetch(new Request(url, { headers: { ...headers, 'last-event-id': String(lastId), 'flowstream-follow': answer.headers.get('flowstream-follow') ?? '' } }));
      expect(resumed.headers.get('flowstream-follow')).toBe(answer.headers.get('flowstream-follow'));
      const after = await readEvents(resumed);
      expect(after[0]?.event.type).not.toBe('snapshot');
      const joined = [...before, ...after];
      expect(onceInOrder(joined)).toBeUndefined();
      expect(joined.map(({ seq, event }) => `${seq}:${event.type}`)).toEqual((await whole).map(({ seq, event }) => `${seq}:${event.type}`));
    } finally {
      await closeAll([first, second], emulator);
    }
  }, 20_000);

  it('show an execution cancelled through one process as aborted to the viewers of every process, with the same last event', async () => {
    const emulator = await createEmulator({ clock: createScaledClock(25), rateLimit: false, samples: false, workflows: [WORKFLOW] });
    const account = `hub-relay-cancel-${process.pid}`;
    const [first, second] = [appProcess(emulator, account), appProcess(emulator, account)];
    try {
      const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS });
      const { executionId } = await starter.executions.start(CANVAS);
      const token = await createRunTokens({ secret: SECRET, scheduler: emulator.scheduler }).sign({ executionId, scope: ['read', 'cancel'], ttlMs: 600_000 });
      const headers = { authorization: `Bearer ${token}` };
      const url = `http://relay.test/executions/${executionId}/events`;
      const [onFirst, onSecond] = await Promise.all([first, second].map(async ({ relay }) => readEvents(await relay.fetch(new Request(url, { headers })), (seen) => seen.some(({ event }) => event.type === 'message'))));
      // Both viewers follow on, after what they had; the cancel goes through the second process.
      const afterIds = [onFirst, onSecond].map((seen) => String(seen?.at(-1)?.seq));
      const rests = [first, second].map(async ({ relay }, index) => readEvents(await relay.fetch(new Request(url, { headers: { ...headers, 'last-event-id': afterIds[index] ?? '' } }))));
      const cancelled = await second.relay.fetch(new Request(`http://relay.test/executions/${executionId}/cancel`, { method: 'POST', headers }));
      expect(((await cancelled.json()) as RunResult).endedBy).toBe('aborted');
      const [lastOnFirst, lastOnSecond] = (await Promise.all(rests)).map((seen) => seen.at(-1));
      expect(lastOnSecond?.event).toMatchObject({ type: 'finished', result: { status: 'failed', endedBy: 'aborted' } });
      expect(lastOnFirst).toEqual(lastOnSecond);
      // A viewer coming late to the first process is told the same.
      const late = await readEvents(await first.relay.fetch(new Request(url, { headers })));
      expect(late.at(-1)).toEqual(lastOnSecond);
      expect(emulator.requests.list({ executionId, endpoint: 'abort' })).toHaveLength(1);
    } finally {
      await closeAll([first, second], emulator);
    }
  }, 20_000);

  it('end the stream of an execution cancelled elsewhere for a process that opens it after its start was trimmed away, telling it the abort ended it', async () => {
    // 80 short tasks side by side, then a long one: well over 100 events (a node of a Redis stream) before
    // the long one ends, so that a stream capped at 50 events lets its start go.
    const tasks = Array.from({ length: 80 }, (_, index) => ({ id: `node-${String(index)}`, parents: ['node-start'], durationMs: 2_000 }));
    const talkative: WorkflowDefinition = { canvasId: 'c-hub-relay-talkative', nodes: [{ id: 'node-start', type: 'start' }, ...tasks, { id: 'node-last', parents: tasks.map(({ id }) => id), durationMs: 600_000 }] };
    const emulator = await createEmulator({ clock: createScaledClock(25), rateLimit: false, samples: false, workflows: [talkative] });
    const account = `hub-relay-trimmed-${process.pid}`;
    const [first, second] = [appProcess(emulator, account, 50), appProcess(emulator, account, 50)];
    try {
      const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, timeoutMs: REQUEST_TIMEOUT_MS });
      const { executionId } = await starter.executions.start('c-hub-relay-talkative');
      const token = await createRunTokens({ secret: SECRET, scheduler: emulator.scheduler }).sign({ executionId, scope: ['read', 'cancel'], ttlMs: 600_000 });
      const headers = { authorization: `Bearer ${token}` };
      const url = `http://relay.test/executions/${executionId}/events`;
      // The long node is running: said by its node event, or by a snapshot standing for events the stream
      // had trimmed before this process read them (a loaded machine: more than 50 appended between two reads).
      const lastRunning = (event: RunEvent): boolean =>
        (event.type === 'node' && event.nodeId === 'node-last' && event.status === 'executing') ||
        (event.type === 'snapshot' && event.state.nodes.some((node) => node.nodeId === 'node-last' && node.status === 'executing'));
      await readEvents(await first.relay.fetch(new Request(url, { headers })), (seen) => seen.some(({ event }) => lastRunning(event)));
      const cancelled = await first.relay.fetch(new Request(`http://relay.test/executions/${executionId}/cancel`, { method: 'POST', headers }));
      expect(((await cancelled.json()) as RunResult).endedBy).toBe('aborted');
      const onFirst = await readEvents(await first.relay.fetch(new Request(url, { headers })));
      expect(onFirst.at(-1)?.event).toMatchObject({ type: 'finished', result: { endedBy: 'aborted' } });
      // The second process never followed it: it opens the trimmed stream, from the state it stands at.
      const frames = await (await second.relay.fetch(new Request(url, { headers }))).text();
      expect(frames).toContain('event: snapshot');
      expect(frames).not.toContain('"endedBy":"failed"');
      expect(frames).toContain('"endedBy":"aborted"');
    } finally {
      await closeAll([first, second], emulator);
    }
  }, 20_000);
});
