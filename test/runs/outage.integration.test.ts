import { createServer } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { firstValueFrom, tap } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type FaultSpec, type ManualClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { isServerError } from '../../src/errors/api-errors.js';
import { isNetworkError } from '../../src/errors/transport-errors.js';
import { createHttpClient } from '../../src/http/client.js';
import { isOutage } from '../../src/runs/poll.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, toRunState } from '../../src/runs/run-state.js';

const open: Emulator[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** Two tasks in a row, 5 minutes in all, with messages along the way: a run that outlives a 3-minute outage. */
const LONG_RUN: WorkflowDefinition = {
  canvasId: 'c-long-run',
  title: 'Long run',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-draft', parents: ['node-start'], durationMs: 120_000, messages: [{ content: 'First draft.' }, { content: 'Second draft.' }, { content: 'Third draft.' }] },
    { id: 'node-review', parents: ['node-draft'], durationMs: 180_000, messages: [{ content: 'Reviewed.' }, { content: 'Approved.' }], files: [{ name: 'review.md', type: 'text/markdown', size: 12 }] },
  ],
};

const THREE_MINUTES = 180_000;

interface Setup {
  readonly clock: ManualClock;
  readonly emulator: Emulator;
  readonly client: ReturnType<typeof createClient>;
}

/** A client on a manual emulator clock (virtual time), over the in-process fetch, through its default budget. */
async function setup(): Promise<Setup> {
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [LONG_RUN] });
  open.push(emulator);
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler });
  return { clock, emulator, client };
}

/** Every request fails the way `fault` says for `ms` of emulator time, from now. */
async function outage({ clock, emulator }: Setup, fault: FaultSpec, ms: number): Promise<{ readonly from: number; readonly to: number }> {
  const from = clock.now();
  const handle = emulator.faults.add(fault);
  await driveClock(clock, { toTime: from + ms });
  handle.remove();
  return { from, to: clock.now() };
}

function executing(events: readonly RunEvent[]): boolean {
  return events.some((event) => event.type === 'node' && event.nodeId === 'node-draft' && event.status === 'executing');
}

describe('a run follows its execution through an outage of the service (emulator, virtual time)', () => {
  it.each<[string, FaultSpec]>([
    ['dropped connections', { kind: 'drop' }],
    ['503 answers', { kind: 'status', status: 503 }],
  ])('reads through 3 minutes of %s, shows it reconnecting, then resumes and finishes with the right result', async (_name, fault) => {
    const context = await setup();
    const { clock, emulator, client } = context;
    const events: RunEvent[] = [];
    const states: RunState[] = [];
    let ended: 'completed' | { error: unknown } | undefined;
    client
      .run('c-long-run')
      .pipe(
        tap((event) => events.push(event)),
        toRunState({ scheduler: emulator.scheduler }),
      )
      .subscribe({ next: (state) => states.push(state), error: (error: unknown) => (ended = { error }), complete: () => (ended = 'completed') });
    await driveClock(clock, { until: () => executing(events) });
    const subscribedAt = clock.now() - (states.at(-1)?.elapsedMs ?? 0);

    const { from, to } = await outage(context, fault, THREE_MINUTES);
    expect(ended).toBeUndefined();
    await driveClock(clock, { until: () => ended !== undefined });

    expect(ended).toBe('completed');
    const finished = events.at(-1);
    expect(finished?.type).toBe('finished');
    const { result } = finished as Extract<RunEvent, { type: 'finished' }>;
    const truth = emulator.executions.get(result.executionId);
    expect(result.status).toBe('finish');
    expect(result.nodes.map((node) => [node.nodeId, node.status])).toEqual(truth?.nodes.map((node) => [node.nodeId, node.status]));
    expect(result.output.flatMap((node) => node.messages.map((message) => message.content))).toEqual(['First draft.', 'Second draft.', 'Third draft.', 'Reviewed.', 'Approved.']);
    expect(result.files.map((file) => file.name)).toEqual(['review.md']);
    // Every message once, none lost over the outage.
    const texts = events.flatMap((event) => (event.type === 'message' ? [event.content] : []));
    expect(texts).toEqual(['First draft.', 'Second draft.', 'Third draft.', 'Reviewed.', 'Approved.']);

    // The state said it was reconnecting during the outage, from its first failed read, attempt after attempt …
    const during = states.filter((state) => state.reconnecting !== undefined);
    expect(during.length).toBeGreaterThan(3);
    const first = during[0]!.reconnecting!;
    expect(first.attempts).toBe(1);
    expect(first.since).toBeGreaterThanOrEqual(from - subscribedAt);
    expect(first.since).toBeLessThan(to - subscribedAt);
    expect(during.every((state) => state.reconnecting?.since === first.since)).toBe(true);
    expect(during.map((state) => state.reconnecting!.attempts)).toEqual(during.map((_state, index) => index + 1));
    expect(first.error).toBe(fault.kind === 'drop' ? 'network error' : 'HTTP 503');
    // … and no more once reads succeeded again.
    const back = states.findIndex((state, index) => index > states.indexOf(during.at(-1)!) && state.reconnecting === undefined);
    expect(back).toBeGreaterThan(0);
    expect(states.slice(back).every((state) => state.reconnecting === undefined)).toBe(true);
    expect(states.at(-1)?.result?.status).toBe('finish');

    // The reads went through the budget at a backoff's pace: no 429, no burst once the service was back.
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    const failed = emulator.requests.list().filter((request) => request.emulatorTime >= from && request.emulatorTime < to);
    console.info(`3-minute outage (${fault.kind}): ${failed.length} failed requests, ${during.at(-1)!.reconnecting!.attempts} failed reads, finished ${((clock.now() - to) / 1000).toFixed(0)} s after it`);
    expect(failed.length).toBeLessThan(60);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
  });

  it('errors after outageMs of failed reads with the last error, carrying the executionId, and leaves the execution running', async () => {
    const context = await setup();
    const { clock, emulator, client } = context;
    const events: RunEvent[] = [];
    let error: unknown;
    let erroredAt: number | undefined;
    client
      .run('c-long-run', {}, { outageMs: 60_000 })
      .pipe(tap((event) => events.push(event)))
      .subscribe({
        error: (caught: unknown) => {
          error = caught;
          erroredAt = clock.now();
        },
      });
    await driveClock(clock, { until: () => executing(events) });
    const fault = emulator.faults.add({ kind: 'status', status: 502 });
    const from = clock.now();
    await driveClock(clock, { until: () => erroredAt !== undefined });
    fault.remove();

    const executionId = (events[0] as Extract<RunEvent, { type: 'started' }>).executionId;
    expect(isServerError(error)).toBe(true);
    expect((error as { executionId?: string }).executionId).toBe(executionId);
    expect((error as Error).message).toMatch(/tried again through the outage for 6\d s, \d+ failed attempts, then gave up/);
    // Given up once the outage outlasted outageMs from its first failed read (a read's own retries take a few seconds).
    expect(erroredAt! - from).toBeGreaterThanOrEqual(60_000);
    expect(erroredAt! - from).toBeLessThan(75_000);
    const reconnecting = events.flatMap((event) => (event.type === 'connection' ? [event.reconnecting] : []));
    expect(reconnecting.length).toBeGreaterThan(3);
    expect(reconnecting.every((entry) => entry !== undefined)).toBe(true);
    // The execution runs on, for a later watch.
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(emulator.executions.get(executionId)?.status).toBe('executing');
  });

  it('sends an abort asked for during an outage once the service is back, and it reaches the service exactly once', async () => {
    const context = await setup();
    const { clock, emulator, client } = context;
    const events: RunEvent[] = [];
    const subscription = client.run('c-long-run').subscribe((event) => events.push(event));
    await driveClock(clock, { until: () => executing(events) });
    const executionId = (events[0] as Extract<RunEvent, { type: 'started' }>).executionId;
    const fault = emulator.faults.add({ kind: 'drop' });
    await driveClock(clock, { until: () => events.some((event) => event.type === 'connection') });
    subscription.unsubscribe();
    await driveClock(clock, { toTime: clock.now() + THREE_MINUTES });
    fault.remove();
    const back = clock.now();
    await driveClock(clock, { until: () => emulator.executions.get(executionId)?.status === 'failed' });

    // Tried through the outage (each attempt dropped before the service saw it), answered once after it.
    const aborts = emulator.requests.list({ endpoint: 'abort' });
    expect(aborts.filter((request) => request.status === 0).length).toBeGreaterThan(1);
    expect(aborts.filter((request) => request.status !== 0)).toHaveLength(1);
    expect(aborts.find((request) => request.status !== 0)?.emulatorTime).toBeGreaterThanOrEqual(back);
    expect(emulator.executions.get(executionId)?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).toBe(true);
    // Nothing is left waiting once it landed.
    await driveClock(clock, { toTime: clock.now() + 600_000 });
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(aborts.length);
  });

  it('follows a watched execution through an outage that its very first read meets', async () => {
    const { clock, emulator, client } = await setup();
    let executionId: string | undefined;
    void client.executions.start('c-long-run').then((answer) => (executionId = answer.executionId));
    await driveClock(clock, { until: () => executionId !== undefined });
    const fault = emulator.faults.add({ kind: 'drop' });
    const events: RunEvent[] = [];
    let completed = false;
    client.watch(executionId!).subscribe({ next: (event) => events.push(event), complete: () => (completed = true) });
    await driveClock(clock, { toTime: clock.now() + 60_000 });
    expect(events.length).toBeGreaterThan(1);
    expect(events.every((event) => event.type === 'connection' && event.reconnecting !== undefined)).toBe(true);
    fault.remove();
    await driveClock(clock, { until: () => completed });
    const after = events.slice(events.findIndex((event) => event.type === 'connection' && event.reconnecting === undefined));
    expect(after[1]).toMatchObject({ type: 'started', executionId });
    expect(after.at(-1)).toMatchObject({ type: 'finished', result: { status: 'finish' } });
  });
});

describe('what counts as an outage, from real failures', () => {
  it('takes a refused connection on loopback (a service that is down) for an outage', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    const http = createHttpClient({ apiKey: `rf_${'a'.repeat(32)}`, baseUrl: `http://127.0.0.1:${port}/v1`, retry: false });
    const error = await http.executions.status('we-aaaaaaaaaaaaaaaaaaaaaaaa').catch((failure: unknown) => failure);
    expect(isNetworkError(error)).toBe(true);
    expect(isOutage(error)).toBe(true);
  });
});

/**
 * A TCP forwarder on loopback in front of the emulator, which can go down — every connection cut, new
 * ones refused — and come back on the same port: the service down and up again, as a client sees it.
 */
async function forwarder(target: number): Promise<{ readonly port: number; down(): Promise<void>; up(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createNetServer((incoming) => {
    const outgoing = connect(target, '127.0.0.1');
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  const listen = (port: number): Promise<void> => new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const { port } = server.address() as AddressInfo;
  const down = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return { port, down, up: () => listen(port), close: down };
}

describe('a run follows its execution through a service that is down (real HTTP on loopback, accelerated clock)', () => {
  it('reads through 3 minutes of refused connections and finishes with the right result', async () => {
    const emulator = await createEmulator({ speed: 50, samples: false, workflows: [LONG_RUN] });
    open.push(emulator);
    const target = Number(new URL(emulator.url).port);
    const front = await forwarder(target);
    // Request timeouts of 5 emulator minutes (6 s of real time): a slow machine makes no timeout of its own.
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: `http://127.0.0.1:${front.port}/v1`, scheduler: emulator.scheduler, timeoutMs: 300_000 });
    const events: RunEvent[] = [];
    let ended: 'completed' | { error: unknown } | undefined;
    client.run('c-long-run').subscribe({ next: (event) => events.push(event), error: (error: unknown) => (ended = { error }), complete: () => (ended = 'completed') });
    try {
      // Readiness only: the run follows its execution.
      await vi.waitFor(() => { expect(executing(events)).toBe(true); }, { timeout: 20_000, interval: 10 });
      await front.down();
      const downAt = emulator.clock.now();
      // Readiness only: 3 minutes of emulator time pass with the service down (3.6 s of real time).
      await vi.waitFor(() => { expect(emulator.clock.now() - downAt).toBeGreaterThanOrEqual(THREE_MINUTES); }, { timeout: 20_000, interval: 20 });
      await front.up();
      await vi.waitFor(() => { expect(ended).toBeDefined(); }, { timeout: 30_000, interval: 20 });
    } finally {
      await front.close().catch(() => undefined);
    }
    expect(ended).toBe('completed');
    const { result } = events.at(-1) as Extract<RunEvent, { type: 'finished' }>;
    expect(result.status).toBe('finish');
    expect(events.flatMap((event) => (event.type === 'message' ? [event.content] : []))).toEqual(['First draft.', 'Second draft.', 'Third draft.', 'Reviewed.', 'Approved.']);
    const failures = events.flatMap((event) => (event.type === 'connection' && event.reconnecting !== undefined ? [event.reconnecting] : []));
    expect(failures.length).toBeGreaterThan(3);
    expect(failures.every((failure) => failure.error === 'network error')).toBe(true);
    expect(events.some((event) => event.type === 'connection' && event.reconnecting === undefined)).toBe(true);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
  }, 60_000);
});

describe('a run whose start meets a service that is down (real HTTP on loopback)', () => {
  it('fails with a NetworkError that says nothing reached the service, after making the start again', async () => {
    const emulator = await createEmulator({ samples: false, workflows: [LONG_RUN] });
    open.push(emulator);
    const front = await forwarder(Number(new URL(emulator.url).port));
    await front.down();
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: `http://127.0.0.1:${front.port}/v1`, retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 1 } });
    try {
      const error = await firstValueFrom(client.run('c-long-run')).catch((caught: unknown) => caught);
      expect(isNetworkError(error)).toBe(true);
      expect(error).toMatchObject({ endpoint: 'run', connected: false, mayHaveStarted: false });
      expect((error as Error).message).not.toContain('may have started');
    } finally {
      await front.close().catch(() => undefined);
    }
    expect(emulator.executions.list()).toHaveLength(0);
  });
});
