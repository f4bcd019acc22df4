import { Redis } from 'ioredis';
import { lastValueFrom, tap } from 'rxjs';
import { type Client, createClient } from '../src/client.js';
import { clockScheduler, createEmulator, createScaledClock, type WorkflowDefinition } from '../src/emulator/index.js';
import { createRedisBudget } from '../src/redis/index.js';
import { startRedisServer } from '../test/redis/redis-server.js';
import { boundMs } from './many-runs.js';
import { seconds, table, times } from './harness/report.js';
import { Sightings } from './harness/sightings.js';
import { ratio, summarize, type Summary } from './harness/stats.js';

/**
 * The fleet table: P processes × 25 runs on one account with the service's limits, each
 * process a client of its own (in one Node process: the budgets are what differs), against the
 * accelerated emulator. Contenders: each process with its own budget (as before `flowstream/redis`:
 * each follows the service's remaining counts), and every process on one Redis budget.
 */
const CANVAS = 'c-bench-fleet';
const WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Bench: one account, many processes',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-work', parents: ['node-start'], durationMs: 4 * 60_000, messages: [{ content: 'done' }] },
  ],
};
const RUNS_PER_PROCESS = 25;

export interface FleetRow {
  readonly processes: number;
  readonly contender: string;
  readonly runs: number;
  readonly finished: number;
  readonly requests: number;
  readonly rateLimited: number;
  /** Detection latency of each execution's end, emulator ms. */
  readonly latency: Summary;
  readonly boundMs: number;
  readonly p50VsBound: number | null;
  /** Max ÷ min over runs of the mean interval between a run's reads. */
  readonly readIntervalSpread: number | null;
}

type Budgets = 'per-process' | 'redis';

async function cell(processes: number, budgets: Budgets, speed: number, socket: string): Promise<FleetRow> {
  const clock = createScaledClock(speed);
  const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [WORKFLOW] });
  const scheduler = clockScheduler(clock);
  const connections: Redis[] = [];
  const closers: (() => Promise<void>)[] = [];
  const account = `bench-fleet-${processes}-${Date.now()}`;
  const clients: Client[] = Array.from({ length: processes }, () => {
    if (budgets === 'per-process') return createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler });
    const redis = new Redis({ path: socket, maxRetriesPerRequest: null });
    connections.push(redis);
    const budget = createRedisBudget({ redis, account, timeScale: speed, scheduler });
    closers.push(() => budget.close());
    return createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget, scheduler });
  });
  const sightings = new Sightings();
  const ids: string[] = [];
  const outcomes = await Promise.all(
    clients.flatMap((client, p) =>
      Array.from({ length: RUNS_PER_PROCESS }, (_, n) =>
        lastValueFrom(
          client.run(CANVAS, { variables: { p, n } }, { timeoutMs: 30 * 60_000 }).pipe(
            tap((event) => {
              if (event.type === 'started') ids.push(event.executionId);
              if (event.type === 'finished') sightings.see(event.executionId, clock.now(), { status: event.result.status });
            }),
          ),
        ).then(
          () => true,
          () => false,
        ),
      ),
    ),
  );
  const executions = emulator.executions.list();
  const latencies = executions.flatMap((execution) => sightings.changes(execution).filter((change) => change.key === 'settle').flatMap((change) => (change.latencyMs === undefined ? [] : [change.latencyMs])));
  const intervals = ids.flatMap((executionId) => {
    const reads = emulator.requests.list({ executionId }).filter((request) => request.endpoint !== 'run' && request.endpoint !== 'abort').map((request) => request.emulatorTime).sort((a, b) => a - b);
    return reads.length < 3 ? [] : [(reads.at(-1)! - reads[0]!) / (reads.length - 1)];
  });
  const runs = processes * RUNS_PER_PROCESS;
  const latency = summarize(latencies);
  const row: FleetRow = {
    processes,
    contender: budgets === 'redis' ? 'one Redis budget' : 'a budget per process',
    runs,
    finished: outcomes.filter(Boolean).length,
    requests: emulator.requests.list().length,
    rateLimited: emulator.requests.list({ status: 429 }).length,
    latency,
    boundMs: boundMs(runs),
    p50VsBound: ratio(latency.p50, boundMs(runs)),
    readIntervalSpread: intervals.length === 0 ? null : Math.max(...intervals) / Math.min(...intervals),
  };
  await Promise.all(closers.map((close) => close()));
  for (const redis of connections) redis.disconnect();
  await emulator.close();
  return row;
}

export async function fleetBench(options: { readonly sizes: readonly number[]; readonly speed: number }): Promise<{ readonly rows: readonly FleetRow[] }> {
  const server = await startRedisServer();
  try {
    const rows: FleetRow[] = [];
    for (const processes of options.sizes) for (const budgets of ['per-process', 'redis'] as const) rows.push(await cell(processes, budgets, options.speed, server.socket));
    return { rows };
  } finally {
    await server.close();
  }
}

export function fleetTable(rows: readonly FleetRow[]): string {
  return table(
    ['processes', 'budgets', 'runs finished', 'requests', '429s', 'latency p50 (s)', 'p95 (s)', 'bound (s)', 'p50 ÷ bound', 'read interval spread'],
    rows.map((row) => [
      String(row.processes),
      row.contender,
      `${row.finished}/${row.runs}`,
      String(row.requests),
      String(row.rateLimited),
      seconds(row.latency.p50),
      seconds(row.latency.p95),
      seconds(row.boundMs),
      times(row.p50VsBound),
      times(row.readIntervalSpread),
    ]),
    2,
  );
}
