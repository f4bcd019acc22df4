import { lastValueFrom, type Observable, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock, type Profile } from '../../src/emulator/index.js';
import { isWorkflowFailedError } from '../../src/errors/run-errors.js';
import { isTimeoutError } from '../../src/errors/transport-errors.js';
import { createHttpClient } from '../../src/http/client.js';
import type { RunResult } from '../../src/domain/model.js';
import { createRuns, type Runs } from '../../src/runs/runs.js';
import { type RunEvent, runResult } from '../../src/runs/events.js';

const PROFILES: readonly Profile[] = ['service', 'spec'];
const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/**
 * The emulator 100× faster (its 1.5 s tick takes 15 ms), reached in-process, polled at 5–20 ms. With
 * `clock`, the emulator and the client both live on that manual clock instead (`driveClock` moves it),
 * polled at 250 ms – 1 s of its time: for outcomes that hang on when a read lands.
 */
async function setup(profile: Profile, clock?: ManualClock): Promise<{ emulator: Emulator; runs: Runs }> {
  const emulator = await createEmulator({ profile, ...(clock === undefined ? { speed: 100 } : { clock }), rateLimit: false, listen: false });
  open.push(emulator);
  const scheduler = clock === undefined ? {} : { scheduler: emulator.scheduler };
  const http = createHttpClient({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    fetch: emulator.fetch,
    retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 4, rateLimitWaitMs: 5, maxWaitMs: 1000 },
    ...scheduler,
  });
  return { emulator, runs: createRuns(http.executions, { polling: clock === undefined ? { minMs: 5, maxMs: 20 } : { minMs: 250, maxMs: 1000 }, ...scheduler }) };
}

/** What the events say the result is: nodes' last statuses, each message's text from its deltas, files. */
function rebuild(events: readonly RunEvent[]) {
  const nodes = new Map<string, string>();
  const texts = new Map<string, string>();
  const files: string[] = [];
  for (const event of events) {
    if (event.type === 'node') nodes.set(event.nodeId, event.status);
    if (event.type === 'message') texts.set(event.messageId, event.replaced ? event.delta : (texts.get(event.messageId) ?? '') + event.delta);
    if (event.type === 'file') files.push(event.file.name);
  }
  return { nodes, texts, files };
}

/** The first `count` events of `run$` on a manual clock, driven until they came; then `run$` is unsubscribed. */
async function firstEvents(run$: Observable<RunEvent>, count: number, clock: ManualClock): Promise<RunEvent[]> {
  let events: RunEvent[] | undefined;
  void lastValueFrom(run$.pipe(take(count), toArray())).then((taken) => (events = taken));
  await driveClock(clock, { until: () => events !== undefined });
  return events ?? [];
}

/** service.md §3.2: a node moves init → executing → finish | failed, never back and never twice to one status. */
const NODE_ORDER: Readonly<Record<string, number>> = { init: 0, waiting: 0, executing: 1, finish: 2, failed: 2 };

function expectEachNodeForward(events: readonly RunEvent[]): void {
  const seen = new Map<string, string[]>();
  for (const event of events) if (event.type === 'node') seen.set(event.nodeId, [...(seen.get(event.nodeId) ?? []), event.status]);
  for (const statuses of seen.values()) {
    const ranks = statuses.map((status) => NODE_ORDER[status] ?? -1);
    expect(ranks.every((rank, index) => index === 0 || rank > ranks[index - 1]!)).toBe(true);
  }
}

function expectRebuilt(events: readonly RunEvent[], result: RunResult): void {
  const { nodes, texts, files } = rebuild(events);
  expect([...nodes]).toEqual(result.nodes.map((node) => [node.nodeId, node.status]));
  expect([...texts]).toEqual(result.output.flatMap((node) => node.messages.map((message) => [message.messageId, message.content])));
  expect(files).toEqual(result.files.map((file) => file.name));
}

describe.each(PROFILES)('runs against the emulator, %s profile', (profile) => {
  it('follows a DAG with parallel branches to its result, never aborting it', async () => {
    const { emulator, runs } = await setup(profile);
    const events = await lastValueFrom(runs.run('c-sample-parallel').pipe(toArray()));
    const finished = events.at(-1);
    expect(finished?.type).toBe('finished');
    const result = (finished as Extract<RunEvent, { type: 'finished' }>).result;
    expect(result.status).toBe('finish');
    expect(result.nodes.every((node) => node.status === 'finish')).toBe(true);
    expect(result.output.some((node) => node.messages.length > 0)).toBe(true);
    expectRebuilt(events, result);
    expectEachNodeForward(events);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
  });

  it('delivers files and the final output', async () => {
    const { runs } = await setup(profile);
    const events = await lastValueFrom(runs.run('c-sample-files').pipe(toArray()));
    const result = await runResult(runs.watch((events[0] as Extract<RunEvent, { type: 'started' }>).executionId));
    expect(result.files.map((file) => file.name).sort()).toEqual(['chart.png', 'figures.csv', 'report.md']);
    expectRebuilt(events, result);
  });

  it('fails with WorkflowFailedError while a sibling still runs; downstream stays init', async () => {
    // The French branch fails at 4 s and the German one runs until 9 s: on a manual clock the failure is
    // read within a second of emulator time, well inside that window, however slowly this machine answers.
    const clock = createManualClock();
    const { emulator, runs } = await setup(profile, clock);
    let error: unknown;
    void runResult(runs.run('c-sample-branch-failure')).then(
      () => (error = new Error('the run finished')),
      (failure: unknown) => (error = failure),
    );
    await driveClock(clock, { until: () => error !== undefined });
    expect(isWorkflowFailedError(error)).toBe(true);
    if (!isWorkflowFailedError(error)) return;
    const { result } = error;
    expect(result.status).toBe('failed');
    expect(result.failedNodes.map((node) => node.nodeId)).toEqual(['node-translate-fr']);
    expect(result.nodes.filter((node) => node.status === 'executing').map((node) => node.nodeId)).toEqual(['node-translate-de']);
    expect(result.nodes.at(-1)?.status).toBe('init');
    expect(error.executionId).toBe(result.executionId);
    expect(emulator.executions.get(result.executionId)?.nodes.find((node) => node.nodeId === 'node-translate-de')?.status).toBe('executing');
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
  });

  // The abort tests below run on a manual clock: at speed 100 the whole run lasts 150 ms of real time,
  // and on a loaded machine it could end before the abort landed (an abort then changes nothing, §3.5).
  it('aborts the execution exactly once when unsubscribed mid-run', async () => {
    const clock = createManualClock();
    const { emulator, runs } = await setup(profile, clock);
    const [started] = await firstEvents(runs.run('c-sample-linear'), 3, clock);
    const executionId = (started as Extract<RunEvent, { type: 'started' }>).executionId;
    await driveClock(clock, { until: () => emulator.executions.get(executionId)?.status === 'failed' });
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(1);
    expect(emulator.executions.get(executionId)?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).toBe(true);
  });

  it('aborts the execution once when unsubscribed while the start is in flight', async () => {
    const clock = createManualClock();
    const { emulator, runs } = await setup(profile, clock);
    emulator.faults.add({ kind: 'latency', ms: 30, endpoint: 'run', times: 1 });
    const seen: RunEvent[] = [];
    const subscription = runs.run('c-sample-linear').subscribe((event) => seen.push(event));
    subscription.unsubscribe();
    // Real time passes for the start's injected latency only; the execution's clock stands still meanwhile.
    await vi.waitFor(() => {
      expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(1);
    });
    const [execution] = emulator.executions.list();
    await driveClock(clock, { until: () => emulator.executions.get(execution!.executionId)?.status === 'failed' });
    expect(seen).toEqual([]);
    expect(emulator.requests.list({ endpoint: 'status' })).toEqual([]);
    expect(emulator.executions.get(execution!.executionId)?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).toBe(true);
  });

  it('reports a start in doubt when it was left on its way and its request timed out: the service may have started it', async () => {
    const clock = createManualClock();
    const emulator = await createEmulator({ profile, clock, rateLimit: false, listen: false });
    open.push(emulator);
    const warnings: { message: string; meta: Readonly<Record<string, unknown>> | undefined }[] = [];
    const logger = { warn: (message: string, meta?: Readonly<Record<string, unknown>>) => warnings.push({ message, meta }) };
    const http = createHttpClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, timeoutMs: { run: 5_000 } });
    const runs = createRuns(http.executions, { scheduler: emulator.scheduler, logger });
    // The start is held 2 s of real time; meanwhile its 5 s request timeout passes on the emulator's clock.
    // (Held for long enough that a loaded machine still times the request out before the hold ends.)
    const held = emulator.faults.add({ kind: 'latency', ms: 2_000, endpoint: 'run', times: 1 });
    runs.run('c-sample-linear').subscribe().unsubscribe();
    await vi.waitFor(() => {
      expect(held.hits).toBe(1);
    });
    clock.advance(5_000);
    // Like a real server, the emulator handles a request whose client gave up: the execution exists, with no id to abort it by.
    await vi.waitFor(
      () => {
        expect(emulator.executions.list()).toHaveLength(1);
      },
      { timeout: 10_000 },
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/may have reached the service/u);
    expect(warnings[0]?.meta).toMatchObject({ canvasId: 'c-sample-linear' });
    expect(isTimeoutError(warnings[0]?.meta?.['error'])).toBe(true);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
  });

  it('does not call a run handle cancelled during its start unstarted when that start timed out: it may have started', async () => {
    const clock = createManualClock();
    const emulator = await createEmulator({ profile, clock, rateLimit: false, listen: false });
    open.push(emulator);
    const http = createHttpClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, timeoutMs: { run: 5_000 } });
    const runs = createRuns(http.executions, { scheduler: emulator.scheduler });
    // Held in real time well past the emulator's 5 s that time the start out (closing the emulator cuts it short).
    const held = emulator.faults.add({ kind: 'latency', ms: 2_000, endpoint: 'run', times: 1 });
    const handle = runs.startRun('c-sample-linear');
    await vi.waitFor(() => {
      expect(held.hits).toBe(1);
    });
    const cancelled = handle.cancel();
    clock.advance(5_000);
    await expect(cancelled).rejects.toSatisfy(isTimeoutError);
    await expect(handle.executionId).rejects.toSatisfy(isTimeoutError);
  });

  it('sends the abort again in the background when the service first answers it with a 5xx, and it lands', async () => {
    const clock = createManualClock();
    const { emulator, runs } = await setup(profile, clock);
    const fault = emulator.faults.add({ kind: 'status', status: 503, endpoint: 'abort', times: 2 });
    const [started] = await firstEvents(runs.run('c-sample-linear'), 2, clock);
    const executionId = (started as Extract<RunEvent, { type: 'started' }>).executionId;
    await driveClock(clock, { until: () => emulator.executions.get(executionId)?.status === 'failed' });
    expect(fault.hits).toBe(2);
    expect(emulator.requests.list({ endpoint: 'abort' }).map((request) => request.status)).toEqual([503, 503, 200]);
    expect(emulator.executions.get(executionId)?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).toBe(true);
  });

  it('watches a finished execution to its result', async () => {
    const { runs } = await setup(profile);
    const first = await runResult(runs.run('c-sample-linear'));
    const events = await lastValueFrom(runs.watch(first.executionId).pipe(toArray()));
    expect(events[0]).toMatchObject({ type: 'started', status: 'finish' });
    const again = (events.at(-1) as Extract<RunEvent, { type: 'finished' }>).result;
    expect({ ...again, canvasId: first.canvasId }).toEqual(first);
  });

  it('survives 5xx, dropped connections and malformed bodies mid-run without losing or duplicating events', async () => {
    const { emulator, runs } = await setup(profile);
    const faults = [
      emulator.faults.add({ kind: 'status', status: 503, endpoint: 'status', times: 2 }),
      emulator.faults.add({ kind: 'drop', endpoint: 'output', times: 1 }),
      emulator.faults.add({ kind: 'malformed', endpoint: 'status', times: 1 }),
    ];
    const events = await lastValueFrom(runs.run('c-sample-parallel').pipe(toArray()));
    const result = (events.at(-1) as Extract<RunEvent, { type: 'finished' }>).result;
    expect(result.status).toBe('finish');
    expectRebuilt(events, result);
    expectEachNodeForward(events);
    // Nothing lost: the events agree with the service's own record of the execution, and with a clean read of its output.
    const truth = emulator.executions.get(result.executionId);
    const { nodes } = rebuild(events);
    expect([...nodes]).toEqual(truth?.nodes.map((node) => [node.nodeId, node.status]));
    const clean = await createHttpClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch }).executions.output(result.executionId);
    expect([...rebuild(events).texts]).toEqual(clean.output.flatMap((node) => node.messages.map((message) => [message.messageId, message.content])));
    expect(rebuild(events).files.sort()).toEqual(clean.files.map((file) => file.name).sort());
    const texts = events.flatMap((event) => (event.type === 'message' && !event.replaced ? [`${event.messageId}:${event.content}`] : []));
    expect(new Set(texts).size).toBe(texts.length);
    expect(faults.map((fault) => fault.hits)).toEqual([2, 1, 1]);
  });
});
