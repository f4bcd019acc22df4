import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { summarize } from './harness/stats.js';

/**
 * Where a saturated round of runs spends its reads, from the log `bench/read-scheduling.ts many|run-end
 * N stream|final log.json` writes (the emulator's requests and every change, times from the first
 * start): `npx tsx bench/read-log.ts log.json`.
 *
 * Each run's reads are told apart by what they did: its first read; its end reads (the read that showed
 * the execution settled, and the output read after it); the others, the reads while it runs. For each
 * kind and endpoint: how many, and how many changes each showed (a change is shown by the read its run
 * sent at the moment the change was seen). Then the gaps before a run's reads while it runs, the reads of
 * each kind per minute, and each change's latency by key.
 *
 * The log carries no budget internals, so the same file from any commit compares: read-scheduling.ts
 * runs unchanged at 90db956, copied there.
 */

/** A change is shown by a read sent at the same emulator moment (a manual clock: within a few ms). */
const SAME_MOMENT_MS = 50;

interface LoggedRequest {
  readonly t: number;
  readonly endpoint: string;
  readonly executionId?: string;
}

interface LoggedChange {
  readonly key: string;
  readonly at: number;
  readonly latencyMs?: number;
}

interface ReadLog {
  readonly requests: readonly LoggedRequest[];
  readonly changes: readonly { readonly executionId: string; readonly changes: readonly LoggedChange[] }[];
}

type ReadKind = 'first' | 'running' | 'end';

export interface ReadLogSummary {
  readonly lastRequestS: number;
  /** Per kind and endpoint (`running output`, `end status`, …): reads, and changes shown per read. */
  readonly reads: Readonly<Record<string, { readonly count: number; readonly changesPerRead: number }>>;
  /** Gaps before a run's reads while it runs (its first read and end reads aside), s. */
  readonly runningGapS: { readonly p50: number | null; readonly p95: number | null; readonly max: number | null };
  /** Per minute from the first start: starts, reads before a run's end (first reads included), end reads. */
  readonly perMinute: readonly { readonly minute: number; readonly starts: number; readonly running: number; readonly end: number }[];
  /** Per change key, latency p50 / p95 / mean, s. */
  readonly latencyByKey: Readonly<Record<string, readonly [number | null, number | null, number | null]>>;
}

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.round(ms / 100) / 10);

export function summarizeReadLog(log: ReadLog): ReadLogSummary {
  const seenAt = new Map<string, number[]>();
  const settledSeenAt = new Map<string, number>();
  const latencies = new Map<string, number[]>();
  for (const { executionId, changes } of log.changes) {
    for (const change of changes) {
      if (change.latencyMs === undefined) continue;
      const at = change.at + change.latencyMs;
      seenAt.set(executionId, [...(seenAt.get(executionId) ?? []), at]);
      if (change.key === 'settle') settledSeenAt.set(executionId, at);
      latencies.set(change.key, [...(latencies.get(change.key) ?? []), change.latencyMs]);
    }
  }
  const reads = new Map<string, { count: number; changes: number }>();
  const gaps: number[] = [];
  const minutes = new Map<number, { starts: number; running: number; end: number }>();
  const lastRead = new Map<string, number>();
  for (const request of log.requests) {
    const minute = Math.floor(request.t / 60_000);
    const counts = minutes.get(minute) ?? { starts: 0, running: 0, end: 0 };
    minutes.set(minute, counts);
    const { executionId } = request;
    if (executionId === undefined) continue;
    if (request.endpoint === 'run') {
      counts.starts += 1;
      continue;
    }
    const previous = lastRead.get(executionId);
    lastRead.set(executionId, request.t);
    const kind: ReadKind = request.t >= (settledSeenAt.get(executionId) ?? Number.POSITIVE_INFINITY) - SAME_MOMENT_MS ? 'end' : previous === undefined ? 'first' : 'running';
    if (kind === 'end') counts.end += 1;
    else counts.running += 1;
    if (kind === 'running' && previous !== undefined) gaps.push(request.t - previous);
    const shown = (seenAt.get(executionId) ?? []).filter((at) => Math.abs(at - request.t) < SAME_MOMENT_MS).length;
    const bucket = `${kind} ${request.endpoint}`;
    const tally = reads.get(bucket) ?? { count: 0, changes: 0 };
    tally.count += 1;
    tally.changes += shown;
    reads.set(bucket, tally);
  }
  const gapSummary = summarize(gaps);
  return {
    lastRequestS: seconds(log.requests.at(-1)?.t ?? 0) ?? 0,
    reads: Object.fromEntries([...reads].sort(([a], [b]) => a.localeCompare(b)).map(([bucket, { count, changes }]) => [bucket, { count, changesPerRead: Math.round((changes / count) * 100) / 100 }])),
    runningGapS: { p50: seconds(gapSummary.p50), p95: seconds(gapSummary.p95), max: seconds(gaps.length === 0 ? null : Math.max(...gaps)) },
    perMinute: [...minutes].sort(([a], [b]) => a - b).map(([minute, counts]) => ({ minute, ...counts })),
    latencyByKey: Object.fromEntries(
      [...latencies].map(([key, sample]) => {
        const summary = summarize(sample);
        return [key, [seconds(summary.p50), seconds(summary.p95), seconds(summary.mean)] as const];
      }),
    ),
  };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const [file] = process.argv.slice(2);
  if (file === undefined) throw new Error('usage: npx tsx bench/read-log.ts log.json (from bench/read-scheduling.ts)');
  const summary = summarizeReadLog(JSON.parse(readFileSync(file, 'utf8')) as ReadLog);
  const gap = summary.runningGapS;
  console.log(`last request at ${String(summary.lastRequestS)} s; gaps before a run's reads while it runs: p50 ${String(gap.p50)} s, p95 ${String(gap.p95)} s, max ${String(gap.max)} s`);
  console.table(summary.reads);
  console.table(summary.perMinute);
  console.table(Object.fromEntries(Object.entries(summary.latencyByKey).map(([key, [p50, p95, mean]]) => [key, { p50, p95, mean }])));
}
