/**
 * Client overhead: with the budget disabled and the emulator in-process, 10,000 concurrent
 * watched runs in one process — memory per run, event-loop delay p99 — and the CPU of one status poll
 * through flowstream against a bare `fetch` + `JSON.parse` of the same payload, measured in the same run.
 * Then telemetry's cost per poll: 3,000 of the same executions watched in interleaved windows on a
 * client without a telemetry hook, one with `flowstream/otel` and no SDK, and one with the SDK (see
 * {@link TelemetryComparison}), five rounds, each ratio taken within its round.
 *
 * `npm run bench` runs it last, in a process of its own with the garbage collector exposed, so that
 * memory is measured after a full collection (and each telemetry window begins after one); alone:
 *
 *     node --expose-gc --import tsx bench/overhead.ts
 *
 * (`npx tsx bench/overhead.ts` works too; memory is then read without forcing a collection, and the
 * table says so.) Prints a table and writes `bench/results/overhead.json`. About 10 minutes on 2 cores, more when the machine is loaded.
 * A shorter run, through the environment (each an {@link OverheadOptions} field): `OVERHEAD_RUNS`,
 * `OVERHEAD_POLL_MS`, `OVERHEAD_WINDOW_MS`, `OVERHEAD_TELEMETRY_ROUNDS`, `OVERHEAD_TELEMETRY_RUNS`,
 * `OVERHEAD_TELEMETRY_POLL_MS`, `OVERHEAD_TELEMETRY_WINDOW_MS`, `OVERHEAD_TELEMETRY_CALLS`;
 * `OVERHEAD_DEBUG=1` prints progress. The heap per run alone (no CPU, loop delay or telemetry figures,
 * nothing written; `OVERHEAD_RUNS` and `OVERHEAD_POLL_MS` apply), a few minutes:
 *
 *     OVERHEAD_MEMORY_ONLY=1 node --expose-gc --import tsx bench/overhead.ts
 *
 * Every figure is taken in this run and the CPU figures are given as ratios to the baseline measured
 * beside them: absolute times depend on the machine, the ratios much less.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Subscription } from 'rxjs';
import { type Client, createClient } from '../src/client.js';
import { createEmulator, type Emulator, type WorkflowDefinition } from '../src/emulator/index.js';
import { createTelemetry } from '../src/otel/index.js';

export interface OverheadOptions {
  /** Concurrent watched runs. Default 10,000. */
  readonly runs?: number;
  /**
   * Fixed status-poll interval of every watch, ms. Default 30,000: 10,000 runs then make ~330 polls
   * a second, which one event loop carries with room to spare; at the default cadence's slowest
   * (10 s) they would need more CPU than one loop has, and the figures would measure the backlog.
   */
  readonly pollMs?: number;
  /** Length of the steady window in which delay and CPU are measured, ms. Default 30,000. */
  readonly windowMs?: number;
  /** Status polls per side and round in the poll-cost comparison. Default 2,000. */
  readonly polls?: number;
  /** Rounds of that comparison, alternating the sides. Default 5. */
  readonly rounds?: number;
  /**
   * Rounds of the telemetry comparison: each round watches the same executions three times, one
   * window per client (no hook, a hook without an SDK, the SDK), in an order that turns from round
   * to round. Default 5.
   */
  readonly telemetryRounds?: number;
  /** Watched runs in each telemetry window (the first of the started executions). Default 3,000 (at most `runs`). */
  readonly telemetryRuns?: number;
  /** Their fixed poll interval, ms: 3,000 runs every 10 s poll as often as 10,000 every 30 s. Default 10,000 (at most `pollMs`). */
  readonly telemetryPollMs?: number;
  /** Length of each telemetry window, ms. Default 10,000 (at most `windowMs`). */
  readonly telemetryWindowMs?: number;
  /** Requests per side and round when the telemetry calls are timed alone (ten rounds). Default 20,000. */
  readonly telemetryCalls?: number;
}

export interface OverheadResults {
  readonly runs: number;
  readonly pollMs: number;
  readonly windowMs: number;
  readonly gcExposed: boolean;
  readonly node: string;
  /** Bytes of the status payload every poll reads (a 5-node workflow). */
  readonly payloadBytes: number;
  readonly memory: {
    /** Heap used with every execution started and no watch, after a full GC when exposed. */
    readonly baselineHeapBytes: number;
    /** The same with every watch subscribed and polling (median of 4 samples, after the window). */
    readonly watchingHeapBytes: number;
    readonly heapBytesPerRun: number;
  };
  readonly eventLoopDelay: {
    /** p50 / p99 / max in ms with the runs started and no watch (same duration). */
    readonly idle: Percentiles;
    /** The same while the watches poll. */
    readonly watching: Percentiles;
  };
  readonly cpu: {
    /** µs of process CPU per status poll; each includes the emulator's handling of the request. */
    readonly bareFetchJsonUs: number;
    /** `JSON.parse` of the payload alone (no request): what the bare baseline spends outside the emulator and fetch. */
    readonly jsonParseUs: number;
    /** `client.executions.status(id)`: transport, envelope check, schema validation. */
    readonly clientStatusUs: number;
    /** One poll inside a running watch (steady window): the above plus diffing, cadence and timers. */
    readonly watchPollUs: number;
    /** clientStatusUs / bareFetchJsonUs. */
    readonly clientStatusRatio: number;
    /** watchPollUs / bareFetchJsonUs. */
    readonly watchPollRatio: number;
    /** What flowstream adds to a poll over the bare baseline, µs (watchPollUs − bareFetchJsonUs). */
    readonly flowstreamExtraUs: number;
    /** Polls the watches made in the window, and their rate. */
    readonly windowPolls: number;
    readonly pollsPerSecond: number;
  };
  readonly telemetry: TelemetryComparison;
  readonly durationMs: number;
}

/**
 * Telemetry's cost per poll, from interleaved windows: every round watches the same executions on
 * three clients in turn, one window each, after a full collection — no telemetry hook at all, the
 * `flowstream/otel` hook with no SDK registered (the API's no-op providers), and the hook over the SDK.
 * Each round's ratios are to its own no-hook window, so drift (JIT, load on the machine) hits both sides.
 */
export interface TelemetryComparison {
  readonly runs: number;
  readonly pollMs: number;
  readonly windowMs: number;
  /** The windows in the order they ran. */
  readonly windows: readonly TelemetryWindow[];
  /** µs of CPU per poll, median over the rounds, per client. */
  readonly absentUs: number;
  readonly noSdkUs: number;
  readonly sdkUs: number;
  /** SDK ÷ no hook, per round (aim ≤ 1.2). */
  readonly sdkRatio: Spread;
  /** No SDK ÷ no hook, per round (aim: 1, zero cost when no SDK is registered). */
  readonly noSdkRatio: Spread;
  /** The telemetry calls of one request timed alone, no request made: what is the SDK's, what is ours. */
  readonly perRequest: TelemetryCalls;
}

/**
 * µs of CPU per request spent in telemetry calls alone, in a loop (median of rounds 3–10, sides
 * alternating): the hook's `request` and `end`, against the same span (nine attributes), counter
 * add and histogram record made straight through the OpenTelemetry API — the SDK's floor.
 */
export interface TelemetryCalls {
  readonly hookUs: number;
  readonly sdkFloorUs: number;
  /** The hook with no SDK registered (the API's no-op providers). */
  readonly noSdkHookUs: number;
}

export type TelemetryClient = 'absent' | 'no-sdk' | 'sdk';

export interface TelemetryWindow {
  readonly round: number;
  readonly client: TelemetryClient;
  readonly polls: number;
  readonly cpuUs: number;
  readonly usPerPoll: number;
  /** Garbage-collection pauses in the window per poll, µs of real time (not CPU: a loaded machine inflates it). */
  readonly gcUsPerPoll: number;
  /** Spans the window ended (the SDK's windows only). */
  readonly spans?: number;
}

/** Ratios over rounds: their median and range. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly rounds: readonly number[];
}

export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

const CANVAS = 'c-overhead';
const MINUTE = 60_000;

/** A long-running workflow with parallel branches: it stays `executing` (and nothing in it changes) for 25 minutes. */
const LONG_RUNNING: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Overhead: long-running, parallel branches',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-search', title: 'Search the web', parents: ['node-start'], durationMs: 25 * MINUTE, messages: [{ content: 'found' }] },
    { id: 'node-read', title: 'Read the papers', parents: ['node-start'], durationMs: 25 * MINUTE, messages: [{ content: 'read' }] },
    { id: 'node-ask', title: 'Ask the forums', parents: ['node-start'], durationMs: 25 * MINUTE, messages: [{ content: 'asked' }] },
    { id: 'node-summary', title: 'Summarise', parents: ['node-search', 'node-read', 'node-ask'], durationMs: MINUTE, messages: [{ content: 'summary' }] },
  ],
};

const progress = (message: string): void => {
  if (process.env['OVERHEAD_DEBUG'] !== undefined) console.error(`${(performance.now() / 1000).toFixed(1)} s  ${message}`);
};

const gc: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;

/**
 * A full collection that also frees what weak references and finalizers held (undici keeps fetch
 * bodies in a FinalizationRegistry; WeakRef targets live until the current job ends): collect, let the
 * loop turn, again.
 */
async function collect(): Promise<void> {
  if (gc === undefined) return;
  for (let pass = 0; pass < 3; pass += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const delay = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Runs `task` for each item, at most `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, task: (item: T) => Promise<unknown>): Promise<void> {
  for (let index = 0; index < items.length; index += width) await Promise.all(items.slice(index, index + width).map(task));
}

/** Event-loop delay over `ms` of whatever is going on, in ms. */
async function loopDelay(ms: number): Promise<Percentiles> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  await delay(ms);
  histogram.disable();
  return { p50: histogram.percentile(50) / 1e6, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 };
}

/** CPU µs per call of `poll` over `ids`, 100 calls in flight at a time. */
async function cpuPerCall(ids: readonly string[], poll: (id: string) => Promise<unknown>): Promise<number> {
  const before = cpuMicros();
  await inBatches(ids, 100, poll);
  return (cpuMicros() - before) / ids.length;
}

/** Every run watched, subscriptions spread over one poll interval so that polls are spread too. */
async function watchAll(client: Client, ids: readonly string[], pollMs: number): Promise<Subscription[]> {
  const subscriptions: Subscription[] = [];
  const perTick = Math.ceil(ids.length / 20);
  for (let index = 0; index < ids.length; index += perTick) {
    for (const id of ids.slice(index, index + perTick)) {
      subscriptions.push(client.watch(id, { pollInterval: { minMs: pollMs, maxMs: pollMs }, output: 'final' }).subscribe({ error: (error: unknown) => { throw error; } }));
    }
    await delay(pollMs / 20);
  }
  // Every watch past its first read (made on subscription), in its steady cadence.
  await delay(Math.min(2_000, 2 * pollMs));
  return subscriptions;
}

/** The steady window: loop delay and CPU per poll, no forced collection in it. */
async function steadyWindow(emulator: Emulator, windowMs: number): Promise<{ readonly delay: Percentiles; readonly cpuUs: number; readonly gcMs: number; readonly polls: number; readonly elapsedMs: number }> {
  emulator.requests.clear();
  let gcMs = 0;
  const collections = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  collections.observe({ entryTypes: ['gc'] });
  const cpuBefore = cpuMicros();
  const started = performance.now();
  const watching = await loopDelay(windowMs);
  const cpuUs = cpuMicros() - cpuBefore;
  collections.disconnect();
  const elapsedMs = performance.now() - started;
  const polls = emulator.requests.list({ endpoint: 'status' }).length;
  const otherRequests = emulator.requests.list().length - polls;
  if (otherRequests !== 0) throw new Error(`expected only status polls in the window, saw ${otherRequests} other requests`);
  return { delay: watching, cpuUs, gcMs, polls, elapsedMs };
}

/** A metric reader collected on demand, as an exporter's would be on its own timer. */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Every execution started up front (distinct inputs: identical starts within 1 s are refused, service.md §2.2). */
async function startExecutions(client: Client, runs: number): Promise<string[]> {
  const ids: string[] = [];
  await inBatches(
    Array.from({ length: runs }, (_, n) => n),
    200,
    async (n) => {
      ids.push((await client.executions.start(CANVAS, { variables: { n } })).executionId);
    },
  );
  return ids;
}

/** Heap used in four samples a few seconds apart (a poll interval apart when polls are faster), each after a full collection. */
async function sampleHeap(emulator: Emulator, pollMs: number): Promise<number[]> {
  const samples: number[] = [];
  for (let sample = 0; sample < 4; sample += 1) {
    await delay(Math.min(2_000, pollMs));
    emulator.requests.clear();
    await collect();
    samples.push(process.memoryUsage().heapUsed);
  }
  return samples;
}

/**
 * The memory part of {@link measureOverhead} alone: heap per watched run, measured the same way
 * (baseline with the executions started and nothing watching them, then every run watched and past
 * its first read), without the poll-cost rounds, the steady window or the telemetry windows.
 */
export async function measureHeapPerRun(options: Pick<OverheadOptions, 'runs' | 'pollMs'> = {}): Promise<Pick<OverheadResults, 'runs' | 'pollMs' | 'gcExposed' | 'node' | 'memory'>> {
  const runs = options.runs ?? 10_000;
  const pollMs = options.pollMs ?? 30_000;
  const emulator: Emulator = await createEmulator({ listen: false, rateLimit: false, workflows: [LONG_RUNNING] });
  try {
    const client: Client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false });
    const ids = await startExecutions(client, runs);
    emulator.requests.clear();
    await collect();
    const baselineHeapBytes = process.memoryUsage().heapUsed;
    const subscriptions = await watchAll(client, ids, pollMs);
    const watchingHeapBytes = median(await sampleHeap(emulator, pollMs));
    for (const subscription of subscriptions) subscription.unsubscribe();
    return {
      runs,
      pollMs,
      gcExposed: gc !== undefined,
      node: process.version,
      memory: { baselineHeapBytes, watchingHeapBytes, heapBytesPerRun: (watchingHeapBytes - baselineHeapBytes) / runs },
    };
  } finally {
    await emulator.close();
  }
}

const TELEMETRY_CLIENTS: readonly TelemetryClient[] = ['absent', 'no-sdk', 'sdk'];

function spread(ratios: readonly number[]): Spread {
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios), rounds: ratios };
}

/**
 * Telemetry's cost per poll in interleaved windows (see {@link TelemetryComparison}). The SDK as it
 * runs in production: a batch span processor (exporting to memory, emptied after each window) and a
 * meter provider whose reader is collected after each window, as an exporter's would be on its timer.
 * Nothing registers a global provider in this process, so the no-SDK hook gets the API's no-op ones.
 */
async function compareTelemetry(emulator: Emulator, ids: readonly string[], settings: { readonly pollMs: number; readonly windowMs: number; readonly rounds: number; readonly calls: number }): Promise<TelemetryComparison> {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const base = { apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false } as const;
  const clients: Readonly<Record<TelemetryClient, Client>> = {
    absent: createClient(base),
    'no-sdk': createClient({ ...base, telemetry: createTelemetry() }),
    sdk: createClient({ ...base, telemetry: createTelemetry({ tracerProvider, meterProvider }) }),
  };
  const windows: TelemetryWindow[] = [];
  try {
    for (let round = 0; round < settings.rounds; round += 1) {
      // The order turns each round (a b c, b c a, c a b): no client always comes first after a collection.
      for (let turn = 0; turn < TELEMETRY_CLIENTS.length; turn += 1) {
        const client = TELEMETRY_CLIENTS[(round + turn) % TELEMETRY_CLIENTS.length]!;
        const subscriptions = await watchAll(clients[client], ids, settings.pollMs);
        await collect();
        // Spans of the reads before the window, still in the batch processor, are exported now, not in it.
        await tracerProvider.forceFlush();
        spans.reset();
        const window = await steadyWindow(emulator, settings.windowMs);
        let ended: number | undefined;
        if (client === 'sdk') {
          await tracerProvider.forceFlush();
          ended = spans.getFinishedSpans().length;
          await reader.collect();
        }
        for (const subscription of subscriptions) subscription.unsubscribe();
        await tracerProvider.forceFlush();
        spans.reset();
        windows.push({ round, client, polls: window.polls, cpuUs: window.cpuUs, usPerPoll: window.cpuUs / window.polls, gcUsPerPoll: (window.gcMs * 1000) / window.polls, ...(ended === undefined ? {} : { spans: ended }) });
        progress(`telemetry round ${round + 1}, ${client}: ${(window.cpuUs / window.polls).toFixed(0)} µs per poll over ${window.polls} polls`);
      }
    }
  } finally {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
  const perPoll = (client: TelemetryClient): number[] => windows.filter((window) => window.client === client).map((window) => window.usPerPoll);
  const absent = perPoll('absent');
  const noSdk = perPoll('no-sdk');
  const sdk = perPoll('sdk');
  return {
    runs: ids.length,
    pollMs: settings.pollMs,
    windowMs: settings.windowMs,
    windows,
    absentUs: median(absent),
    noSdkUs: median(noSdk),
    sdkUs: median(sdk),
    sdkRatio: spread(sdk.map((us, round) => us / absent[round]!)),
    noSdkRatio: spread(noSdk.map((us, round) => us / absent[round]!)),
    perRequest: await timeTelemetryCalls(settings.calls),
  };
}

/** {@link TelemetryCalls}: a status poll's telemetry under a run's span, each side `calls` times a round. */
async function timeTelemetryCalls(calls: number): Promise<TelemetryCalls> {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] });
  const meterProvider = new MeterProvider({ readers: [new OnDemandReader()] });
  const tracer = tracerProvider.getTracer('floor');
  const meter = meterProvider.getMeter('floor');
  const requests = meter.createCounter('requests');
  const budgetWait = meter.createHistogram('budget.wait');
  const parent = trace.setSpan(context.active(), tracer.startSpan('run'));
  const executionId = 'we-0123456789abcdef';
  const requestAttributes = { 'http.request.method': 'GET', 'url.template': 'openapi/workflow/{executionId}/status', 'flowstream.endpoint': 'status', 'flowstream.budget.class': 'status', 'flowstream.execution_id': executionId };
  const labels = { 'flowstream.endpoint': 'status', 'flowstream.budget.class': 'status' };
  const byOutcome = { ...labels, 'flowstream.outcome': 'ok' };
  const throughHook = (telemetry: ReturnType<typeof createTelemetry>) => (): void => {
    telemetry.request({ endpoint: 'status', method: 'GET', priority: 'status', executionId, parent, at: Date.now() }).end({ at: Date.now(), outcome: 'ok', status: 200, retries: 0, budgetWaitMs: 0, rateLimited: 0 });
  };
  const sides = {
    hookUs: throughHook(createTelemetry({ tracerProvider, meterProvider })),
    sdkFloorUs: (): void => {
      const span = tracer.startSpan('flowstream.request', { kind: SpanKind.CLIENT, startTime: Date.now(), attributes: requestAttributes }, parent);
      span.setAttribute('http.response.status_code', 200);
      span.setAttribute('flowstream.retries', 0);
      span.setAttribute('flowstream.budget.wait_ms', 0);
      span.setAttribute('flowstream.outcome', 'ok');
      span.end(Date.now());
      requests.add(1, byOutcome);
      budgetWait.record(0, labels);
    },
    noSdkHookUs: throughHook(createTelemetry()),
  };
  const rounds: Record<keyof typeof sides, number[]> = { hookUs: [], sdkFloorUs: [], noSdkHookUs: [] };
  try {
    for (let round = 0; round < 10; round += 1) {
      for (const [side, call] of Object.entries(sides) as [keyof typeof sides, () => void][]) {
        const before = cpuMicros();
        for (let n = 0; n < calls; n += 1) call();
        // The first two rounds warm the JIT up.
        if (round >= 2) rounds[side].push((cpuMicros() - before) / calls);
        await tracerProvider.forceFlush();
        spans.reset();
        gc?.();
      }
    }
  } finally {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
  return { hookUs: median(rounds.hookUs), sdkFloorUs: median(rounds.sdkFloorUs), noSdkHookUs: median(rounds.noSdkHookUs) };
}

/**
 * Measures the client's overhead; prints nothing. Parameters default to the figures the bench reports.
 *
 * @example
 * ```ts
 * const results = await measureOverhead({ runs: 1_000, windowMs: 5_000 });
 * ```
 */
export async function measureOverhead(options: OverheadOptions = {}): Promise<OverheadResults> {
  const runs = options.runs ?? 10_000;
  const pollMs = options.pollMs ?? 30_000;
  const windowMs = options.windowMs ?? 30_000;
  const polls = Math.min(options.polls ?? 2_000, runs);
  const rounds = options.rounds ?? 5;
  const telemetryRounds = options.telemetryRounds ?? 5;
  const telemetryRuns = Math.min(options.telemetryRuns ?? 3_000, runs);
  const telemetryPollMs = options.telemetryPollMs ?? Math.min(10_000, pollMs);
  const telemetryWindowMs = options.telemetryWindowMs ?? Math.min(10_000, windowMs);
  const telemetryCalls = options.telemetryCalls ?? 20_000;
  const began = performance.now();

  const emulator: Emulator = await createEmulator({ listen: false, rateLimit: false, workflows: [LONG_RUNNING] });
  try {
    const client: Client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false });

    const ids = await startExecutions(client, runs);
    progress(`started ${ids.length}`);
    const statusUrl = (id: string): string => `${emulator.url}/openapi/workflow/${id}/status`;
    const headers = { Authorization: `Bearer ${emulator.apiKey}` };
    const bare = async (id: string): Promise<unknown> => (await emulator.fetch(statusUrl(id), { headers })).json();
    const payload = await (await emulator.fetch(statusUrl(ids[0]!), { headers })).text();

    // Poll cost, before any watch runs: bare fetch + JSON.parse vs the client's status call, same
    // executions, alternating sides per round so drift (JIT, GC, the emulator's request log) hits both.
    const sample = ids.slice(0, polls);
    await cpuPerCall(sample.slice(0, 500), bare); // warm-up, both sides
    await cpuPerCall(sample.slice(0, 500), (id) => client.executions.status(id));
    const bareRounds: number[] = [];
    const clientRounds: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      emulator.requests.clear();
      bareRounds.push(await cpuPerCall(sample, bare));
      emulator.requests.clear();
      clientRounds.push(await cpuPerCall(sample, (id) => client.executions.status(id)));
    }
    const parseStart = cpuMicros();
    const parses = 20_000;
    for (let n = 0; n < parses; n += 1) JSON.parse(payload);
    const jsonParseUs = (cpuMicros() - parseStart) / parses;

    progress('poll cost measured');
    // Baseline memory and loop delay: the executions exist, nothing watches them.
    emulator.requests.clear();
    await collect();
    const baselineHeapBytes = process.memoryUsage().heapUsed;
    const idle = await loopDelay(Math.min(windowMs, 10_000));

    const subscriptions = await watchAll(client, ids, pollMs);
    progress(`watching ${subscriptions.length}`);
    const window = await steadyWindow(emulator, windowMs);
    const { delay: watching, polls: windowPolls } = window;

    progress(`window: ${windowPolls} polls`);
    const heapSamples = await sampleHeap(emulator, pollMs);
    for (const subscription of subscriptions) subscription.unsubscribe();
    if (process.env['OVERHEAD_DEBUG'] !== undefined) {
      await collect();
      console.error({ baselineHeapBytes, heapSamples, afterUnsubscribe: process.memoryUsage().heapUsed });
    }

    // Telemetry's cost: the same executions watched on three clients in turn, round after round.
    const telemetry = await compareTelemetry(emulator, ids.slice(0, telemetryRuns), { pollMs: telemetryPollMs, windowMs: telemetryWindowMs, rounds: telemetryRounds, calls: telemetryCalls });

    const bareFetchJsonUs = median(bareRounds);
    const clientStatusUs = median(clientRounds);
    const watchPollUs = window.cpuUs / windowPolls;
    const watchingHeapBytes = median(heapSamples);
    return {
      runs,
      pollMs,
      windowMs,
      gcExposed: gc !== undefined,
      node: process.version,
      payloadBytes: Buffer.byteLength(payload),
      memory: {
        baselineHeapBytes,
        watchingHeapBytes,
        heapBytesPerRun: (watchingHeapBytes - baselineHeapBytes) / runs,
      },
      eventLoopDelay: { idle, watching },
      cpu: {
        bareFetchJsonUs,
        jsonParseUs,
        clientStatusUs,
        watchPollUs,
        clientStatusRatio: clientStatusUs / bareFetchJsonUs,
        watchPollRatio: watchPollUs / bareFetchJsonUs,
        flowstreamExtraUs: watchPollUs - bareFetchJsonUs,
        windowPolls,
        pollsPerSecond: windowPolls / (window.elapsedMs / 1000),
      },
      telemetry,
      durationMs: performance.now() - began,
    };
  } finally {
    await emulator.close();
  }
}

/**
 * The results as a table for a terminal.
 *
 * @example
 * ```ts
 * console.log(formatOverhead(await measureOverhead()));
 * ```
 */
export function formatOverhead(results: OverheadResults): string {
  const { memory, eventLoopDelay: loop, cpu, telemetry } = results;
  const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
  const ms = (value: number): string => `${value.toFixed(1)} ms`;
  const us = (value: number): string => `${value.toFixed(0)} µs`;
  const { perRequest } = telemetry;
  const gcPerPoll = (client: TelemetryClient): number => median(telemetry.windows.filter((window) => window.client === client).map((window) => window.gcUsPerPoll));
  const ratio = (spread: Spread): string => `×${spread.median.toFixed(2)} (${spread.min.toFixed(2)}–${spread.max.toFixed(2)})`;
  const rows: [string, string][] = [
    ['watched runs (budget off, emulator in-process)', `${results.runs.toLocaleString('en')} polling every ${results.pollMs / 1000} s`],
    ['memory per run: heap used', `${kib(memory.heapBytesPerRun)}${results.gcExposed ? '' : ' (no --expose-gc: not collected first)'}`],
    ['event-loop delay p50 / p99 / max, idle', `${ms(loop.idle.p50)} / ${ms(loop.idle.p99)} / ${ms(loop.idle.max)}`],
    ['event-loop delay p50 / p99 / max, watching', `${ms(loop.watching.p50)} / ${ms(loop.watching.p99)} / ${ms(loop.watching.max)}`],
    ['status payload', `${results.payloadBytes} bytes`],
    ['CPU per poll: bare fetch + JSON.parse (baseline)', `${us(cpu.bareFetchJsonUs)}  ×1.00`],
    ['  of which JSON.parse alone', us(cpu.jsonParseUs)],
    ['CPU per poll: client.executions.status', `${us(cpu.clientStatusUs)}  ×${cpu.clientStatusRatio.toFixed(2)}`],
    ['CPU per poll: inside a running watch', `${us(cpu.watchPollUs)}  ×${cpu.watchPollRatio.toFixed(2)}`],
    ['  flowstream over the baseline', `+${us(cpu.flowstreamExtraUs)} per poll`],
    ['polls in the window', `${cpu.windowPolls.toLocaleString('en')} (${cpu.pollsPerSecond.toFixed(0)}/s over ${results.windowMs / 1000} s)`],
    [
      `telemetry: ${telemetry.windows.length / 3} rounds of three ${telemetry.windowMs / 1000} s windows, ${telemetry.runs.toLocaleString('en')} runs polling every ${telemetry.pollMs / 1000} s`,
      'CPU per poll (median), ratio to no hook: median (min–max over rounds)',
    ],
    ['  no telemetry hook', us(telemetry.absentUs)],
    ['  flowstream/otel, no SDK registered', `${us(telemetry.noSdkUs)}  ${ratio(telemetry.noSdkRatio)}`],
    ['  flowstream/otel on the SDK (batch span processor, in-memory export)', `${us(telemetry.sdkUs)}  ${ratio(telemetry.sdkRatio)}`],
    ['  GC pauses per poll (median): no hook / no SDK / SDK', `${us(gcPerPoll('absent'))} / ${us(gcPerPoll('no-sdk'))} / ${us(gcPerPoll('sdk'))}`],
    ['telemetry calls alone, per request: the hook on the SDK / the same calls straight to the SDK / the hook, no SDK', `${perRequest.hookUs.toFixed(1)} / ${perRequest.sdkFloorUs.toFixed(1)} / ${perRequest.noSdkHookUs.toFixed(1)} µs`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

/**
 * Measures, prints the table, writes `bench/results/overhead.json` and returns the results: what
 * `npm run bench` calls.
 *
 * @example
 * ```ts
 * const results = await main();
 * ```
 */
export async function main(options: OverheadOptions = {}): Promise<OverheadResults> {
  const results = await measureOverhead(options);
  console.log(formatOverhead(results));
  const file = new URL('./results/overhead.json', import.meta.url);
  await mkdir(new URL('.', file), { recursive: true });
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nwritten to bench/results/overhead.json (${(results.durationMs / 1000).toFixed(0)} s)`);
  return results;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const number = (name: string): number | undefined => (process.env[name] === undefined ? undefined : Number(process.env[name]));
  const given = {
    runs: number('OVERHEAD_RUNS'),
    pollMs: number('OVERHEAD_POLL_MS'),
    windowMs: number('OVERHEAD_WINDOW_MS'),
    telemetryRounds: number('OVERHEAD_TELEMETRY_ROUNDS'),
    telemetryRuns: number('OVERHEAD_TELEMETRY_RUNS'),
    telemetryPollMs: number('OVERHEAD_TELEMETRY_POLL_MS'),
    telemetryWindowMs: number('OVERHEAD_TELEMETRY_WINDOW_MS'),
    telemetryCalls: number('OVERHEAD_TELEMETRY_CALLS'),
  };
  const options = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  if (process.env['OVERHEAD_MEMORY_ONLY'] === undefined) await main(options);
  else {
    const { runs, pollMs, gcExposed, memory } = await measureHeapPerRun(options);
    const perRun = `${(memory.heapBytesPerRun / 1024).toFixed(1)} KiB`;
    console.log(`${runs} watched runs (polls every ${pollMs / 1000} s): heap per run ${perRun}${gcExposed ? '' : ' (no --expose-gc: not collected first)'}`);
    console.log(JSON.stringify(memory));
  }
}
