import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createAccountBudget } from '../src/budget/index.js';
import { createClient } from '../src/client.js';
import { normalizeOptions } from '../src/http/options.js';
import { createExecutionsApi } from '../src/http/resources.js';
import { createTransport } from '../src/http/transport.js';
import { observeExecutions } from '../src/runs/run-lifecycle.js';
import { clockScheduler, createEmulator, createManualClock } from '../src/emulator/index.js';
import { table, writeResults } from './harness/report.js';

/**
 * The budget's scale rows: N requests queued in one budget, then all cancelled (a service whose runs are
 * all unsubscribed at once, a deploy), on a clock that stands still so that only the budget's burst
 * leaves and everything else waits. Each request goes as a run sends its read: a status read of the
 * run layer's source (`ExecutionSource.status`) over the client's executions API, through its request
 * path (retry → budget → deadline → fetch), cancelled by unsubscribing it. CPU time per operation, in
 * µs, from `process.cpuUsage`.
 */
export interface ScaleRow {
  readonly queued: number;
  readonly enqueueUsPerOp: number;
  readonly cancelUsPerOp: number;
  /** Enqueue and cancel of all N, ms of CPU. */
  readonly totalMs: number;
  /**
   * The same N waits through `budget.acquire`, each with an AbortSignal that is then aborted (a caller
   * of the budget's public method), ms of CPU: Node builds an abort event and a `DOMException` per
   * `abort()`, which the client's own path does without.
   */
  readonly withSignalsMs: number;
}

const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

export function queuedThenCancelled(queued: number): ScaleRow {
  const budget = createAccountBudget({ scheduler: clockScheduler(createManualClock()) });
  // The burst's few requests leave; their answers never come (unsubscribing aborts them).
  const transport = createTransport('key', normalizeOptions({ apiKey: 'key', baseUrl: 'http://127.0.0.1:9/v1', fetch: () => new Promise<Response>(() => undefined), gate: budget }));
  const source = observeExecutions(createExecutionsApi({ transport, logger: undefined, uploadedKeys: new Set() }));
  const began = cpuMs();
  const subscriptions = Array.from({ length: queued }, (_, index) => source.status(`we-${index}`).subscribe({ error: () => undefined }));
  const enqueued = cpuMs();
  for (const subscription of subscriptions) subscription.unsubscribe();
  const cancelled = cpuMs();
  return {
    queued,
    enqueueUsPerOp: ((enqueued - began) * 1000) / queued,
    cancelUsPerOp: ((cancelled - enqueued) * 1000) / queued,
    totalMs: cancelled - began,
    withSignalsMs: withSignals(queued),
  };
}

/** N waits through `budget.acquire`, each with its own AbortSignal, then every signal aborted: ms of CPU. */
function withSignals(queued: number): number {
  const budget = createAccountBudget({ scheduler: clockScheduler(createManualClock()) });
  const controllers = Array.from({ length: queued }, () => new AbortController());
  const began = cpuMs();
  const waits = controllers.map((controller, index) => budget.acquire({ endpoint: 'status', priority: 'status', key: `we-${index}` }, controller.signal).catch(() => undefined));
  for (const controller of controllers) controller.abort();
  const ended = cpuMs();
  void Promise.all(waits);
  return ended - began;
}

export function budgetScale(sizes: readonly number[]): { readonly rows: readonly ScaleRow[] } {
  return { rows: sizes.map(queuedThenCancelled) };
}

export function budgetScaleTable(rows: readonly ScaleRow[]): string {
  return table(
    ['requests queued then cancelled', 'enqueue (µs/op)', 'cancel (µs/op)', 'total CPU (ms)', 'through acquire with AbortSignals (ms)'],
    rows.map((row) => [row.queued.toLocaleString('en'), row.enqueueUsPerOp.toFixed(1), row.cancelUsPerOp.toFixed(1), row.totalMs.toFixed(0), row.withSignalsMs.toFixed(0)]),
  );
}

/** 10,000 watched runs with the budget on: its queue holds nearly all of them at any time. */
export interface WatchedWithBudget {
  readonly runs: number;
  readonly windowMs: number;
  /** Heap growth per watched run, bytes (after a collection when `--expose-gc`). */
  readonly heapBytesPerRun: number;
  readonly eventLoopDelayP99Ms: number;
  readonly eventLoopDelayMaxMs: number;
  /** Requests waiting in the budget at the end of the window. */
  readonly queued: number;
}

const collect = async (): Promise<void> => {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setImmediate(resolve));
};

/**
 * Watches `runs` executions with one client whose budget is on (the service's 100 a minute): every
 * run's status read waits in the budget's queue, so this measures what the budget costs when it
 * holds them all — memory per run and the event loop's delay — on the emulator in-process, real time.
 */
export async function watchedWithBudget(runs = 10_000, windowMs = 20_000): Promise<WatchedWithBudget> {
  const emulator = await createEmulator({ listen: false, rateLimit: false, samples: false, workflows: [{ canvasId: 'c-long', title: 'long', nodes: [{ id: 'node-start', type: 'start' }, { id: 'node-long', parents: ['node-start'], durationMs: 3_600_000 }] }] });
  try {
    const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false });
    const ids: string[] = [];
    for (let batch = 0; batch < runs; batch += 200) {
      const started = await Promise.all(Array.from({ length: Math.min(200, runs - batch) }, (_, n) => starter.executions.start('c-long', { variables: { n: batch + n } })));
      ids.push(...started.map((execution) => execution.executionId));
    }
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });
    await collect();
    const before = process.memoryUsage().heapUsed;
    const subscriptions = ids.map((id) => client.watch(id, { output: 'final' }).subscribe({ error: () => undefined }));
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    histogram.disable();
    await collect();
    const after = process.memoryUsage().heapUsed;
    const queued = client.budget?.snapshot().queued.total ?? 0;
    for (const subscription of subscriptions) subscription.unsubscribe();
    return { runs, windowMs, heapBytesPerRun: (after - before) / runs, eventLoopDelayP99Ms: histogram.percentile(99) / 1e6, eventLoopDelayMaxMs: histogram.max / 1e6, queued };
  } finally {
    await emulator.close();
  }
}

export function watchedWithBudgetTable(result: WatchedWithBudget): string {
  return table(
    ['watched runs, budget on', 'heap per run', 'event-loop p99', 'max', 'waiting in the budget'],
    [[result.runs.toLocaleString('en'), `${(result.heapBytesPerRun / 1024).toFixed(1)} KiB`, `${result.eventLoopDelayP99Ms.toFixed(1)} ms`, `${result.eventLoopDelayMaxMs.toFixed(1)} ms`, result.queued.toLocaleString('en')]],
  );
}

export const BUDGET_SCALE_TITLE = "Budget scale: requests queued in one budget through the client's request path, then all cancelled by unsubscribing; CPU per operation (aim: 20,000 in under 0.5 s)";

// `npm run bench` runs this file in a process of its own: in the process of the other scenarios, the
// garbage they leave makes every collection of the 20,000 requests' objects dearer (550 ms there
// against 290–370 ms in a fresh process, in the same run of the bench).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const scale = budgetScale([1_000, 5_000, 20_000]);
  console.log(`\n${BUDGET_SCALE_TITLE}\n`);
  console.log(budgetScaleTable(scale.rows));
  const watchedRuns = await watchedWithBudget();
  console.log(`\n${watchedWithBudgetTable(watchedRuns)}  (aim: event-loop p99 ≤ 20 ms)`);
  console.log(`→ ${await writeResults('budget-scale', { ...scale, watchedWithBudget: watchedRuns })}`);
}
