import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, createScaledClock, type Emulator, type ScaledClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { scrubbedEnv, startProcess, type RunningProcess } from '../cli/support/child-process.js';
import type { FleetWorkerConfig } from './fleet-worker.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * A fleet of processes on one account (issue 14): each a child process with its own client, all
 * sharing the account's budget in a real redis-server, against the emulator with the service's limits
 * (100 a minute, PROTOCOL §2.1) on an accelerated clock that every process reads alike.
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

/** Per run, the mean time between two of its reads (status or output), emulator ms. */
function meanReadInterval(executionId: string): number | undefined {
  const reads = emulator.requests
    .list({ executionId })
    .filter((request) => request.endpoint === 'status' || request.endpoint === 'output')
    .map((request) => request.emulatorTime)
    .sort((a, b) => a - b);
  if (reads.length < 3) return undefined;
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

      // Per process, the mean over its runs of each run's mean read interval.
      const perProcess = workers.map((worker) => {
        const intervals = startedBy(worker).map(meanReadInterval).filter((value): value is number => value !== undefined);
        return intervals.reduce((sum, value) => sum + value, 0) / intervals.length;
      });
      const spread = Math.max(...perProcess) / Math.min(...perProcess);
      console.info(`fleet of 8 (${sizes.join(', ')} runs): ${all.length} requests, busiest minute ${busiestMinute(all.map((r) => r.emulatorTime))}, per-process mean read interval ${perProcess.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s (×${spread.toFixed(2)})`);
      expect(spread).toBeLessThanOrEqual(1.3);
    },
    180_000,
  );
});
