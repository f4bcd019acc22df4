import { createAccountBudget } from '../src/budget/index.js';
import { clockScheduler, createManualClock } from '../src/emulator/index.js';
import { table } from './harness/report.js';

/**
 * Issue 13's scale rows: N requests queued in one budget, then all cancelled (a service whose runs are
 * all unsubscribed at once, a deploy), on a clock that stands still so that only the budget's burst
 * leaves and everything else waits. CPU time per operation, in µs, from `process.cpuUsage`.
 */
export interface ScaleRow {
  readonly queued: number;
  readonly enqueueUsPerOp: number;
  readonly cancelUsPerOp: number;
  /** Enqueue and cancel of all N, ms of CPU. */
  readonly totalMs: number;
}

const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

export function queuedThenCancelled(queued: number): ScaleRow {
  const budget = createAccountBudget({ scheduler: clockScheduler(createManualClock()) });
  const controllers = Array.from({ length: queued }, () => new AbortController());
  const began = cpuMs();
  const waits = controllers.map((controller, index) => budget.acquire({ endpoint: 'status', priority: 'status', key: `we-${index}` }, controller.signal).catch(() => undefined));
  const enqueued = cpuMs();
  for (const controller of controllers) controller.abort();
  const cancelled = cpuMs();
  void Promise.all(waits);
  return {
    queued,
    enqueueUsPerOp: ((enqueued - began) * 1000) / queued,
    cancelUsPerOp: ((cancelled - enqueued) * 1000) / queued,
    totalMs: cancelled - began,
  };
}

export function budgetScale(sizes: readonly number[]): { readonly rows: readonly ScaleRow[] } {
  return { rows: sizes.map(queuedThenCancelled) };
}

export function budgetScaleTable(rows: readonly ScaleRow[]): string {
  return table(
    ['requests queued then cancelled', 'enqueue (µs/op)', 'cancel (µs/op)', 'total CPU (ms)'],
    rows.map((row) => [row.queued.toLocaleString('en'), row.enqueueUsPerOp.toFixed(1), row.cancelUsPerOp.toFixed(1), row.totalMs.toFixed(0)]),
  );
}
