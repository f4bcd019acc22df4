import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockScheduler, createEmulator, createScaledClock, type Emulator, type ScaledClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { scrubbedEnv, startProcess, type RunningProcess } from '../cli/support/child-process.js';
import type { FleetWorkerConfig } from './fleet-worker.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * A fleet of processes on one account: each a child process with its own client, all
 * sharing the account's budget in a real redis-server, against the emulator with the service's limits
 * (100 a minute, service.md §2.1) on an accelerated clock that every process reads alike.
 */
const SPEED = 15;
const WORKER = fileURLToPath(new URL('fleet-worker.ts', import.meta.url));
const CANVAS = 'c-fleet';
/** Long enough for every run to be read several times while the account is saturated, short enough for the day bucket's burst (950) to carry the whole test. */
const FLEET_WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'A long task',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-work', parents: ['node-start'], durationMs: 6 * 60_000, messages: [{ content: 'done' }] },
  ],
};

let redis: RedisServer;
let clock: ScaledClock;
let emulator: Emulator;
beforeAll(async () => {
  redis = await startRedisServer();
  clock = createScaledClock(SPEED);
  emulator = await createEmulator({ clock, workflows: [FLEET_WORKFLOW] });
});
afterAll(async () => {
  await emulator.close();
  await redis.close();
});

function spawnWorker(name: string, runs: number, account: string): RunningProcess {
  const config: FleetWorkerConfig = { socket: redis.socket, account, baseUrl: emulator.url, apiKey: emulator.apiKey, speed: SPEED, realStart: clock.realStart, canvasId: CANVAS, runs, name };
  return startProcess(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], { env: scrubbedEnv(), cwd: process.cwd() });
}

/** The execution ids a worker printed as it started its runs. */
const startedBy = (worker: RunningProcess): string[] => [...worker.stdout().matchAll(/^started (\S+)$/gmu)].map((match) => match[1]!);

/** The most requests the emulator received in any window of 60 s of its time. */
function busiestMinute(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last += 1) {
    while (sorted[last]! - sorted[first]! >= 60_000) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * Per run, the mean time between two of its reads (status or output) from `after` on, emulator ms. The
 * fleet's steady state starts once every run has started: until then a process's own starts come
 * before its reads (start > reads, within each process), so a process with 50 runs to start reads its
 * first runs later than one with 5 — a matter of the start phase, not of how the account is shared.
 */
function meanReadInterval(executionId: string, after = 0): number | undefined {
  const reads = emulator.requests
    .list({ executionId })
    .filter((request) => (request.endpoint === 'status' || request.endpoint === 'output') && request.emulatorTime >= after)
    .map((request) => request.emulatorTime)
    .sort((a, b) => a - b);
  if (reads.length < 2) return undefined;
  return (reads.at(-1)! - reads[0]!) / (reads.length - 1);
}

describe('one account budget for a fleet, in Redis', () => {
  it(
    '8 processes with 5, 10, 20 and 50 runs: no 429, no minute over the limit, every run read about equally often',
    async () => {
      const sizes = [5, 10, 20, 50, 5, 10, 20, 50];
      const workers = sizes.map((runs, index) => spawnWorker(`w${index}`, runs, 'acct-fleet'));
      const codes = await Promise.all(workers.map((worker) => worker.exited(150_000)));
      expect(codes).toEqual(sizes.map(() => 0));

      const all = emulator.requests.list();
      expect(emulator.requests.list({ status: 429 })).toEqual([]);
      expect(busiestMinute(all.map((request) => request.emulatorTime))).toBeLessThanOrEqual(100);
      expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(sizes.reduce((sum, runs) => sum + runs, 0));

      // Per process, the mean over its runs of each run's mean read interval, in the steady state.
      const lastStart = Math.max(...emulator.requests.list({ endpoint: 'run' }).map((request) => request.emulatorTime));
      const perProcess = workers.map((worker) => {
        const intervals = startedBy(worker).map((id) => meanReadInterval(id, lastStart)).filter((value): value is number => value !== undefined);
        return intervals.reduce((sum, value) => sum + value, 0) / intervals.length;
      });
      const spread = Math.max(...perProcess) / Math.min(...perProcess);
      console.info(`fleet of 8 (${sizes.join(', ')} runs): ${all.length} requests, busiest minute ${busiestMinute(all.map((r) => r.emulatorTime))}, per-process mean read interval ${perProcess.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s (×${spread.toFixed(2)})`);
      expect(spread).toBeLessThanOrEqual(1.3);
    },
    180_000,
  );
});

describe('a fleet that loses a process or Redis', () => {
  it(
    'kill -9 of one process mid-run: the others take its share once its lease runs out, with no 429',
    async () => {
      const account = 'acct-crash';
      const before = emulator.requests.list().length;
      const victim = spawnWorker('victim', 20, account);
      const others = [spawnWorker('a', 10, account), spawnWorker('b', 10, account)];
      await victim.waitFor(/(started \S+\n[^]*){20}/u, 60_000);
      const victimRuns = startedBy(victim);
      victim.child.kill('SIGKILL');
      const killedAt = clock.now();
      expect(await Promise.all(others.map((worker) => worker.exited(150_000)))).toEqual([0, 0]);

      const after = emulator.requests.list().slice(before);
      expect(after.filter((request) => request.status === 429)).toEqual([]);
      // The victim's runs are read no more; the survivors' runs are read faster once its lease (two
      // minutes) is over than while its 20 runs still counted.
      expect(after.filter((request) => victimRuns.includes(request.executionId ?? '') && request.emulatorTime > killedAt + 1_000)).toEqual([]);
      const survivorRuns = new Set(others.flatMap(startedBy));
      const reads = (from: number, to: number): number =>
        after.filter((request) => survivorRuns.has(request.executionId ?? '') && request.endpoint !== 'run' && request.emulatorTime >= from && request.emulatorTime < to).length;
      const leaseEnd = killedAt + 2 * 62_000;
      const whileLeased = reads(killedAt, leaseEnd) / (leaseEnd - killedAt);
      const afterLease = reads(leaseEnd, leaseEnd + 120_000) / 120_000;
      console.info(`kill -9: survivors' reads per emulator minute ${(whileLeased * 60_000).toFixed(1)} while the victim's lease ran, ${(afterLease * 60_000).toFixed(1)} after`);
      expect(afterLease).toBeGreaterThan(whileLeased);
    },
    180_000,
  );

  it(
    'Redis stopped and restarted mid-run: requests wait, then resume, with no 429 and no burst',
    async () => {
      const account = 'acct-restart';
      const before = emulator.requests.list().length;
      const workers = [spawnWorker('r1', 10, account), spawnWorker('r2', 10, account)];
      await Promise.all(workers.map((worker) => worker.waitFor(/(started \S+\n[^]*){10}/u, 60_000)));
      await redis.stop();
      const stoppedAt = clock.now();
      // Ten emulator seconds without Redis: nothing may be sent (fail closed).
      await new Promise<void>((resolve) => {
        clockScheduler(clock).schedule(() => {
          resolve();
        }, 10_000);
      });
      const restartedAt = clock.now();
      await redis.restart();
      expect(await Promise.all(workers.map((worker) => worker.exited(150_000)))).toEqual([0, 0]);

      const after = emulator.requests.list().slice(before);
      expect(after.filter((request) => request.status === 429)).toEqual([]);
      // Nothing left while Redis was away (a request let through just before may still arrive).
      expect(after.filter((request) => request.emulatorTime > stoppedAt + 2_000 && request.emulatorTime < restartedAt)).toEqual([]);
      expect(busiestMinute(after.map((request) => request.emulatorTime))).toBeLessThanOrEqual(100);
    },
    180_000,
  );
});
