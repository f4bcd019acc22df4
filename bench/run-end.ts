import { pathToFileURL } from 'node:url';
import { createManualClock, driveClock } from '../src/emulator/index.js';
import { mulberry32 } from '../src/emulator/engine/seeded-random.js';
import type { OutputMode } from '../src/runs/poll.js';
import { followWithFlowstream } from './harness/contenders.js';
import { seconds, table, times, writeResults } from './harness/report.js';
import { Sightings } from './harness/sightings.js';
import { ratio, type Summary, summarize } from './harness/stats.js';
import { openWorld } from './harness/world.js';
import { boundMs, MANY_RUNS_VARIANTS } from './many-runs.js';

/**
 * The run's end: how long after its last node ended a client sees the execution settle (service.md
 * §3.3: every node done, the execution says `finish` on the service's next tick), for N runs started at
 * once on one account, flowstream with no duration model and the default budget, in `output: 'stream'`
 * and `'final'`, against the uniform bound (many-runs.ts `boundMs`: N runs sharing 100 reads a minute,
 * a change waiting half a round). The many-runs workflow's variants; the emulator and the client on one
 * manual clock, the client's jitter seeded: the same figures on any machine.
 * `npx tsx bench/run-end.ts` runs it alone.
 */

export const RUN_END_SIZES = [10, 40, 100] as const;
const OUTPUTS: readonly OutputMode[] = ['stream', 'final'];
/** service.md §3.6: no execution outlives 30 minutes. */
const DEADLINE_MS = 30 * 60_000;

export interface RunEndRow {
  readonly runs: number;
  readonly output: OutputMode;
  readonly completed: number;
  readonly requests: number;
  /** Per run: the execution seen settled − its last node's end, emulator ms. */
  readonly latencyMs: Summary;
  readonly boundMs: number;
  readonly p50VsBound: number | null;
}

async function measure(runs: number, output: OutputMode): Promise<RunEndRow> {
  const clock = createManualClock();
  const world = await openWorld({ speed: 0, clock, workflows: MANY_RUNS_VARIANTS });
  const random = Math.random;
  Math.random = mulberry32(runs);
  try {
    const sightings = new Sightings();
    let done = false;
    const following = followWithFlowstream(world, { canvasIds: MANY_RUNS_VARIANTS.map((workflow) => workflow.canvasId!), runs, deadlineMs: DEADLINE_MS, sightings }, output, world.flowstream({}, { durations: false })).finally(() => {
      done = true;
    });
    await driveClock(clock, { until: () => done });
    const { completed } = await following;
    const latencies = world.emulator.executions.list().flatMap((execution) => {
      const settle = sightings.changes(execution).find((change) => change.key === 'settle');
      if (settle?.latencyMs === undefined) return [];
      const lastEnd = Math.max(...execution.nodes.map((node) => node.endedAt ?? 0));
      return [settle.at + settle.latencyMs - lastEnd];
    });
    const latencyMs = summarize(latencies);
    return { runs, output, completed, requests: world.requests().total, latencyMs, boundMs: boundMs(runs), p50VsBound: ratio(latencyMs.p50, boundMs(runs)) };
  } finally {
    Math.random = random;
    await world.close();
  }
}

export async function runEnd(): Promise<readonly RunEndRow[]> {
  const rows: RunEndRow[] = [];
  for (const runs of RUN_END_SIZES) for (const output of OUTPUTS) rows.push(await measure(runs, output));
  return rows;
}

export function runEndTable(rows: readonly RunEndRow[]): string {
  return table(
    ['N', 'output', 'completed', 'requests', 'p50 s', 'p95 s', 'mean s', 'bound s', 'p50/bound'],
    rows.map((row) => [
      String(row.runs),
      row.output,
      `${String(row.completed)}/${String(row.runs)}`,
      String(row.requests),
      seconds(row.latencyMs.p50),
      seconds(row.latencyMs.p95),
      seconds(row.latencyMs.mean),
      seconds(row.boundMs),
      times(row.p50VsBound),
    ]),
    2,
  );
}

export async function runEndReport(): Promise<readonly RunEndRow[]> {
  const rows = await runEnd();
  console.log('\nThe run\'s end: the execution seen settled − its last node\'s end, N runs at once on one account, no duration model, the default budget, a manual clock; latencies in emulator seconds\n');
  console.log(runEndTable(rows));
  console.log(`→ ${await writeResults('run-end', { scenario: 'run-end', rows })}`);
  return rows;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) await runEndReport();
