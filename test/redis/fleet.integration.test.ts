import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockScheduler, createEmulator, createScaledClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { scrubbedEnv, startProcess, type RunningProcess } from '../cli/support/child-process.js';
import { busiestWindow, missedAims } from './fleet-figures.js';
import { bundleFleetWorker, type FleetOutcome, runFleet, workerCommand } from './fleet-harness.js';
import type { FleetWorkerConfig } from './fleet-worker.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * Fleets of processes on one account (see fleet-harness.ts), at small counts: 4 processes in real time
 * on a larger minute, 8 on an accelerated clock at the service's limits; each with a process joining
 * late and one killed -9. `bench/fleet.ts` runs the full matrix.
 */
/**
 * The accelerated fleet's clock: 6 times real time. A stall of the machine, and the time from a grant
 * to its request's arrival, are that many times as long for the fleet; at 6× a loaded machine's few
 * hundred ms stay within the budget's latency allowance (2 s), at 15× they did not (see the test).
 */
const SPEED = 6;
/**
 * The most that runs' status-read intervals may differ, largest ÷ smallest, across processes and across
 * runs: the aim, 1.3.
 */
const FAIR_SPREAD = 1.3;
/**
 * The share of the account's nominal rate (its requests per minute) used while runs wait for reads, at
 * the least: the aim, 85%. The budget's own margin caps it near 88%: its pacer sends one request per
 * ⌈62,000 / (95 − 5 + 1)⌉ = 682 ms when saturated (a 5% safety margin, a 2 s latency allowance and a
 * burst of 5, so that no window of the service ever holds more than 95), 88 a minute — over a short
 * span a few more, what the pacer's burst saved before it. The real-time fleet measures 91% and
 * ×1.02–1.05 across processes, ×1.06–1.16 across runs (on a machine loaded by other work to 4–14 on its
 * 2 cores; once 73% at a load of 22).
 */
const UTILISATION = 0.85;

let redis: RedisServer;
let worker: string;
let closeWorker: () => Promise<void>;
beforeAll(async () => {
  redis = await startRedisServer();
  const bundled = await bundleFleetWorker();
  worker = bundled.paths.worker;
  closeWorker = bundled.close;
});
afterAll(async () => {
  await redis.close();
  await closeWorker();
});

const describeOutcome = (name: string, outcome: FleetOutcome): string => {
  const means = outcome.figures.processMeansMs.map((ms) => (ms === null ? '—' : (ms / 1000).toFixed(1))).join(', ');
  const spread = (value: number | null): string => (value === null ? '—' : `×${value.toFixed(2)}`);
  return `${name}: ${outcome.figures.requests} requests, steady ${(outcome.steadyMs.from / 1000).toFixed(0)}–${(outcome.steadyMs.to / 1000).toFixed(0)} s, per-process mean status interval ${means} s (${spread(outcome.figures.processSpread)}, runs ${spread(outcome.figures.runSpread)}), utilisation ${(outcome.figures.utilisation * 100).toFixed(0)}%, busiest minute ${outcome.busiestMinute}, longest quiet ${(outcome.longestQuietMs.ms / 1000).toFixed(1)} s from ${(outcome.longestQuietMs.from / 1000).toFixed(0)} s, start phase ${(outcome.startPhaseMs / 1000).toFixed(0)} s with ${outcome.readsWhileStarting} reads${outcome.takeoverMs === undefined ? '' : `, a killed process's share taken over ${(outcome.takeoverMs / 1000).toFixed(1)} s after the kill`}, real ${(outcome.realMs / 1000).toFixed(1)} s, event loops late by p99 ${outcome.loopDelayMs.map((delay) => delay.p99).join('/')} ms, at most ${Math.max(...outcome.loopDelayMs.map((delay) => delay.max))} ms, the emulator's p99 ${outcome.emulatorLoopDelayMs.p99} ms, at most ${outcome.emulatorLoopDelayMs.max} ms`;
};

/**
 * What every fleet must show: every run started, read and finished, no 429, a killed process's runs read
 * no more, the account used (at least `utilisation`) and every run read alike (within `spread`).
 */
function expectFleet(outcome: FleetOutcome, survivingRuns: number, utilisation: number, spread: number): void {
  expect(outcome.exitCodes.every((code) => code === 0)).toBe(true);
  expect(outcome.starts).toBe(outcome.runs);
  expect(outcome.failedRuns).toBe(0);
  expect(outcome.figures.rateLimited).toBe(0);
  expect(outcome.readsOfKilledAfterKill).toBe(0);
  expect(outcome.figures.runIntervalsMs.flat()).toHaveLength(survivingRuns);
  expect(missedAims(outcome.figures, { utilisation, spread })).toEqual([]);
}

describe('one account budget for a fleet, in Redis: the account used whole, every run read alike', () => {
  it(
    '4 processes in real time, one joining late and one killed -9: no 429, ≥ 85% of the account, spread ≤ ×1.3',
    async () => {
      // 600 a minute: 9 reads a second at the pacer's pace, so that the 22 runs left (a read every 2 s
      // at the fastest, service.md §6) keep the account busy, each read every 2.4 s, 6 times and more
      // once the fleet has settled.
      const outcome = await runFleet({ processes: [2, 4, 8, 12], joinLate: { runs: 4, afterMs: 500 }, kill: { process: 2, afterMs: 500 }, workMs: 26_000, perMinute: 600, perDay: 100_000 }, redis.socket, worker);
      console.info(describeOutcome('4 processes in real time', outcome));
      expectFleet(outcome, 2 + 4 + 12 + 4, UTILISATION, FAIR_SPREAD);
    },
    120_000,
  );

  it(
    `8 processes at the service's limits on a ${SPEED}× clock, one joining late and one killed -9: no 429, ≥ 85% of the account, spread ≤ ×1.3`,
    async () => {
      // The day's 100,000 keep its pacing out of the minute's share being measured (at the service's
      // 10,000 the budget plans the day's burst over a quarter hour). At a load of 10–20 on the 2 cores
      // thirteen runs of it measured 87–88%, ×1.00–1.12 across processes and ×1.02–1.20 across runs, and
      // one 72% (×1.23, ×1.55). At a load of 7–15, 4 of 22 runs missed (51%, 67%, 51%, 51%); the last
      // two, their request logs kept, showed one cause: the start phase's requests arrived clumped (13 in five seconds
      // at 10–15 s, 7–8 in every other five), their processes' event loops having stalled up to
      // 0.74 s real, 4.4 s of this clock, past the budget's 2 s latency allowance; the service's first
      // minute counted 96, its remaining 4 fell under the reserve of 5, and every process waited the
      // window out: 62 s with nothing sent (the line printed gives the longest quiet; the first two,
      // with busiest minutes of 94 and 93, ran before it was printed). At 15× it fell
      // to 61–62% in about one run in three, and the runs of the processes holding most were read least:
      // each grant's compare-and-set in Redis took up to 1.7 s real with 3 to 4 conflicts, and the
      // fleet's first requests reached the service seconds of its time after the budget had counted
      // them, so that its first window counted more than the budget did and left less than the
      // reserve: every process then waited out the service's window, a minute with nothing sent.
      const outcome = await runFleet({ processes: [2, 3, 4, 5, 2, 3, 4, 5], joinLate: { runs: 3, afterMs: 5_000 }, kill: { process: 7, afterMs: 5_000 }, workMs: 180_000, perDay: 100_000, speed: SPEED }, redis.socket, worker);
      console.info(describeOutcome(`8 processes at ${SPEED}×`, outcome));
      expectFleet(outcome, 23 + 3, UTILISATION, FAIR_SPREAD);
    },
    120_000,
  );
});

describe('a fleet that loses Redis', () => {
  it(
    'Redis stopped and restarted mid-run: requests wait, then resume, with no 429 and no burst',
    async () => {
      const canvasId = 'c-fleet-restart';
      const workflow: WorkflowDefinition = {
        canvasId,
        title: 'A long task',
        nodes: [
          { id: 'node-start', type: 'start' },
          { id: 'node-work', parents: ['node-start'], durationMs: 90_000, messages: [{ content: 'done' }] },
        ],
      };
      // Slower than the fleets: a request let through just before the stop may still be on its way for a few real ms.
      const speed = 15;
      const clock = createScaledClock(speed);
      const emulator = await createEmulator({ clock, samples: false, workflows: [workflow] });
      const spawnWorker = (name: string, runs: number): RunningProcess => {
        const config: FleetWorkerConfig = { socket: redis.socket, account: 'acct-restart', baseUrl: emulator.url, apiKey: emulator.apiKey, speed, realStart: clock.realStart, canvasId, runs, name };
        return startProcess(process.execPath, [...workerCommand(worker), JSON.stringify(config)], { env: scrubbedEnv(), cwd: process.cwd() });
      };
      try {
        const workers = [spawnWorker('r1', 6), spawnWorker('r2', 6)];
        await Promise.all(workers.map((worker) => worker.waitFor(/(started \S+\n[^]*){6}/u, 60_000)));
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
        expect(await Promise.all(workers.map((worker) => worker.exited(90_000)))).toEqual([0, 0]);

        const requests = emulator.requests.list();
        expect(requests.filter((request) => request.status === 429)).toEqual([]);
        // Nothing left while Redis was away (a request let through just before may still arrive).
        expect(requests.filter((request) => request.emulatorTime > stoppedAt + 2_000 && request.emulatorTime < restartedAt)).toEqual([]);
        expect(busiestWindow(requests.map((request) => request.emulatorTime))).toBeLessThanOrEqual(100);
      } finally {
        await emulator.close();
      }
    },
    120_000,
  );
});
