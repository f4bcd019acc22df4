import { describe, expect, it } from 'vitest';
import { budgetScale, budgetScaleTable } from '../../bench/budget-scale.js';
import { BUNDLE_SIZE_HEADERS, bundleSize, bundleSizeTable } from '../../bench/bundle-size.js';
import { type Arrivals, daySimulation, daySimulationTable, FLOWSTREAM_DAY, LOOP_2S_DAY } from '../../bench/day-simulation.js';
import { MANY_RUNS_HEADERS, manyRuns, manyRunsTable, PHASE_SWEEP_HEADERS, phaseSweep, phaseSweepTable } from '../../bench/many-runs.js';
import { formatOverhead, measureOverhead } from '../../bench/overhead.js';
import { SINGLE_RUN_HEADERS, singleRun, singleRunTable } from '../../bench/single-run.js';

// A smoke test of the bench harness at the smallest sizes, fast: it proves the scenarios run end to
// end and that their numbers add up. It asserts no timings (those are the bench's to report).

/** The table's lines split into cells (cells are separated by two spaces or more). */
const cells = (text: string): string[][] => text.split('\n').map((line) => line.trim().split(/ {2,}/));

const sum = (counts: Readonly<Partial<Record<string, number>>>): number => Object.values(counts).reduce<number>((total, count) => total + (count ?? 0), 0);

describe('npm run bench, at its smallest', () => {
  it('queues requests in a budget and cancels them all, per size', () => {
    const { rows } = budgetScale([10, 100]);
    expect(rows.map((row) => row.queued)).toEqual([10, 100]);
    for (const row of rows) expect(row.totalMs).toBeGreaterThanOrEqual(0);
    expect(cells(budgetScaleTable(rows))).toHaveLength(4);
  });

  it('simulates a whole day of a run every six hours on a manual clock, and its numbers add up', { timeout: 60_000 }, async () => {
    // Four runs of the day's workflow: the harness runs the whole day whatever the count (the bench's
    // own scenarios have 24 to 1,440 runs), and each run costs real time.
    const sixHourly: Arrivals = { name: 'six-hourly', description: 'a run every six hours', at: [0, 6, 12, 18].map((hour) => hour * 3_600_000) };
    const { rows } = await daySimulation([FLOWSTREAM_DAY, LOOP_2S_DAY], [sixHourly]);
    expect(rows.map((row) => row.contender)).toEqual(['flowstream', 'fixed 2 s loop']);
    for (const row of rows) {
      // 4 runs of about four minutes, six hours apart: every one seen to its end, none blind, no 429.
      expect(row).toMatchObject({ runs: 4, seenToEnd: 4, rateLimited: 0, minutesBlind: 0 });
      expect(row.latency.count).toBe(4);
      expect(row.latency.p50!).toBeLessThanOrEqual(row.latency.p99!);
      // The day's count is what the emulator accepted, and what is left of it can still abort.
      expect(row.lowestDailyRemaining).toBe(10_000 - row.requests);
      expect(row.abortsPossibleAtEnd).toBeGreaterThanOrEqual(row.lowestDailyRemaining);
    }
    expect(cells(daySimulationTable(rows))).toHaveLength(4);
  });

  it('measures the browser bundle of a minimal import, without zod\'s full build and its locales', { timeout: 60_000 }, async () => {
    const size = await bundleSize();
    expect(size.gzippedBytes).toBeLessThan(size.minifiedBytes);
    expect(size.byPackage.map((part) => part.name)).toEqual(expect.arrayContaining(['flowstream', 'rxjs', 'ky', 'zod']));
    expect(size.byPackage.reduce((total, part) => total + part.bytes, 0)).toBeLessThanOrEqual(size.minifiedBytes);
    // zod/mini on the client path: the full build with its 64 locales was 454 KB of a 530 KB bundle.
    expect(size.byPackage.find((part) => part.name === 'zod')!.bytes).toBeLessThan(60 * 1024);
    // Not even one locale: the client words its few kinds of issue itself.
    expect(size.modules.filter((module) => module.path.startsWith('zod/v4/locales/'))).toEqual([]);
    expect(size.minifiedBytes).toBeLessThan(200 * 1024);
    // The budget in memory alone: the shared account's protocol (only `createRedisBudget` links it in,
    // budget/shared-account.ts) is no part of a minimal client. It was 8.6 KB of account-budget.ts.
    expect(size.modules.map((module) => module.path)).not.toContain('src/budget/shared-account.ts');
    expect(size.modules.find((module) => module.path === 'src/budget/account-budget.ts')!.bytes).toBeLessThan(6 * 1024);
    // No rxjs operator for one use: the request's deadline is a timer of its own (rxjs's `timeout` was
    // 0.8 KB), and a late subscriber's catch-up and the durations' first view are emitted directly
    // (`concat`, `from` and `startWith` pulled in rxjs's scheduled-source machinery, 2.7 KB).
    // Nor `defer` or `switchMap` over an Observable: their conversion of any input (`innerFrom`, with
    // tslib's generator helpers for async iterables and streams) was 5.7 KB. A run's deadline and its
    // waits are the scheduler's own actions, as its polls' are, not `timer()`s.
    const paths = size.modules.map((module) => module.path);
    for (const part of ['operators/timeout.js', 'observable/concat.js', 'operators/startWith.js', 'scheduled/scheduled.js', 'observable/innerFrom.js', 'observable/timer.js']) {
      expect(paths).not.toContain(`rxjs/dist/esm5/internal/${part}`);
    }
    expect(cells(bundleSizeTable([size]))[0]).toEqual([...BUNDLE_SIZE_HEADERS]);
  });

  it('compares one run of the scripted timeline per contender, and its counts add up', { timeout: 60_000 }, async () => {
    const result = await singleRun({ repetitions: 1, speed: 50 });

    expect(result.rows.map((row) => row.contender)).toEqual(['flowstream (stream)', 'flowstream (final)', 'fixed 2 s loop', 'fixed 1 s loop']);
    for (const row of result.rows) {
      expect(row.completed).toBe(1);
      const { total, run, status, output, other } = row.requestsPerRun;
      expect(run + status + output + other).toBe(total);
      expect(run).toBe(1);
      expect(output).toBeGreaterThanOrEqual(1);
      // Five task nodes start and end, and the execution settles: eleven changes, all seen.
      expect(row.detection).toMatchObject({ changes: 11, seen: 11 });
      // Every change is seen after it happened, and the median is no later than the 95th percentile.
      const { p50, p95, count } = row.detection.latencyMs;
      expect(count).toBe(11);
      expect(p50).toBeGreaterThan(0);
      expect(p50!).toBeLessThanOrEqual(p95!);
    }
    expect(result.rows.find((row) => row.contender === 'fixed 2 s loop')?.versus2sLoop).toEqual({ requests: 1, p50: 1, mean: 1 });

    const table = cells(singleRunTable(result));
    expect(table[0]).toEqual([...SINGLE_RUN_HEADERS]);
    expect(table.slice(2).map((line) => line.length)).toEqual([14, 14, 14, 14]);
  });

  it('runs two runs at once per contender on one account, and its request counts match the emulator log', { timeout: 60_000 }, async () => {
    const result = await manyRuns({ sizes: [2], speed: 100 });

    expect(result.rows.map((row) => [row.runs, row.contender])).toEqual([
      [2, 'flowstream (stream)'],
      [2, 'flowstream (final)'],
      [2, 'fixed 2 s loop'],
      [2, 'fixed 1 s loop'],
    ]);
    for (const row of result.rows) {
      expect(row.completed).toBe(2);
      // Only a failed request keeps a completed run from counting for the service's own tool.
      if (row.requests.rateLimited === 0) expect(row.completedWithoutError).toBe(2);
      else expect(row.completedWithoutError).toBeLessThan(2);
      expect(sum(row.requests.byEndpoint)).toBe(row.requests.total);
      expect(row.requests.byEndpoint.run).toBe(2);
      expect(row.detection).toMatchObject({ changes: 22, seen: 22 });
      expect(row.boundMs).toBeCloseTo(600);
    }

    // flowstream's budget keeps it under the account's limit, whatever the timing.
    expect(result.rows.filter((row) => row.contender.startsWith('flowstream')).map((row) => row.requests.rateLimited)).toEqual([0, 0]);

    const table = cells(manyRunsTable(result));
    expect(table[0]).toEqual([...MANY_RUNS_HEADERS]);
    expect(table.slice(2).map((line) => line.length)).toEqual([18, 18, 18, 18]);
  });

  it('sweeps the first node\'s duration, two flowstream rows per duration, with no 429', { timeout: 60_000 }, async () => {
    const rows = await phaseSweep({ runs: 2, planMs: [20_000, 55_000], speed: 100 });

    expect(rows.map((row) => [row.planMs, row.contender])).toEqual([
      [20_000, 'flowstream (stream)'],
      [20_000, 'flowstream (final)'],
      [55_000, 'flowstream (stream)'],
      [55_000, 'flowstream (final)'],
    ]);
    for (const row of rows) {
      expect(row.completed).toBe(2);
      expect(row.requests.rateLimited).toBe(0);
      expect(row.detection).toMatchObject({ changes: 22, seen: 22 });
    }
    const table = cells(phaseSweepTable(rows));
    expect(table[0]).toEqual([...PHASE_SWEEP_HEADERS]);
    expect(table.slice(2).map((line) => line.length)).toEqual([11, 11, 11, 11]);
  });

  it('measures the client overhead of a few watched runs against a bare fetch + JSON.parse, every figure present', { timeout: 60_000 }, async () => {
    const results = await measureOverhead({ runs: 50, pollMs: 200, windowMs: 1000, polls: 50, rounds: 1, telemetryRounds: 1, telemetryWindowMs: 400, telemetryCalls: 200 });

    expect(results.runs).toBe(50);
    expect(results.payloadBytes).toBeGreaterThan(0);
    expect(results.cpu.windowPolls).toBeGreaterThan(0);
    for (const figure of [results.cpu.bareFetchJsonUs, results.cpu.clientStatusUs, results.cpu.watchPollUs, results.cpu.clientStatusRatio, results.cpu.watchPollRatio, results.telemetry.absentUs, results.telemetry.noSdkUs, results.telemetry.sdkUs, results.telemetry.sdkRatio.median]) {
      expect(Number.isFinite(figure) && figure > 0).toBe(true);
    }
    expect(results.cpu.watchPollRatio).toBeCloseTo(results.cpu.watchPollUs / results.cpu.bareFetchJsonUs);
    expect(Number.isFinite(results.memory.heapBytesPerRun)).toBe(true);
    expect(results.eventLoopDelay.watching.p99).toBeGreaterThan(0);
    expect(formatOverhead(results)).toContain('CPU per poll: inside a running watch');
    // One window per client in the round, each polling; the SDK's window traced its polls.
    expect(results.telemetry.windows.map((window) => window.client)).toEqual(['absent', 'no-sdk', 'sdk']);
    for (const window of results.telemetry.windows) expect(window.polls).toBeGreaterThan(0);
    expect(results.telemetry.windows.find((window) => window.client === 'sdk')?.spans).toBeGreaterThan(0);
    expect(results.telemetry.sdkRatio.median).toBeCloseTo(results.telemetry.sdkUs / results.telemetry.absentUs);
    for (const figure of Object.values(results.telemetry.perRequest)) expect(Number.isFinite(figure) && figure > 0).toBe(true);
    expect(formatOverhead(results)).toContain('flowstream/otel on the SDK');
  });
});
