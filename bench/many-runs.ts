import type { WorkflowDefinition } from '../src/emulator/index.js';
import { type Contender, FLOWSTREAM_FINAL, FLOWSTREAM_STREAM, LOOP_1S, LOOP_2S } from './harness/contenders.js';
import { type Detection, detection, seconds, table, times } from './harness/report.js';
import { Sightings } from './harness/sightings.js';
import { variantOf } from './harness/variants.js';
import { ratio } from './harness/stats.js';
import { openWorld, type RequestCounts } from './harness/world.js';

/**
 * The many-runs workflow (before its variants, below): about four minutes with parallel branches — plan 40 s; two gathers of 75 s and
 * 110 s side by side; write 60 s; review 35 s — long against the budget's round of N status polls, so
 * that most changes fall in the steady state where every run waits its turn.
 */
const CANVAS_ID = 'c-bench-many';

export const MANY_RUNS_WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS_ID,
  title: 'Bench: a multi-node run, many at once',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-plan', parents: ['node-start'], durationMs: 40_000, messages: [{ content: 'plan' }] },
    { id: 'node-gather-a', parents: ['node-plan'], durationMs: 75_000, messages: [{ content: 'a: first half' }, { content: 'a: second half' }] },
    { id: 'node-gather-b', parents: ['node-plan'], durationMs: 110_000, messages: [{ content: 'b: first third' }, { content: 'b: second third' }, { content: 'b: last third' }] },
    { id: 'node-write', parents: ['node-gather-a', 'node-gather-b'], durationMs: 60_000, messages: [{ content: 'draft' }, { content: 'report' }] },
    { id: 'node-review', parents: ['node-write'], durationMs: 35_000, messages: [{ content: 'approved' }] },
  ],
};

/**
 * The runs' timelines: `VARIANTS` versions of the workflow, each duration moved by a seeded ±15%, run
 * `item` starting variant `item % VARIANTS` — the same for every contender.
 */
const VARIANTS = 16;
const variantsOf = (workflow: WorkflowDefinition): readonly WorkflowDefinition[] =>
  Array.from({ length: VARIANTS }, (_, variant) => variantOf(workflow, variant + 1, (durationMs) => 0.15 * durationMs, `${CANVAS_ID}-${variant}`));
export const MANY_RUNS_VARIANTS: readonly WorkflowDefinition[] = variantsOf(MANY_RUNS_WORKFLOW);

/** service.md §2.1: 100 requests per minute per account. */
export const BUDGET_PER_SECOND = 100 / 60;

/**
 * The physical bound for N runs sharing the budget: with every request a status poll, each
 * run is read once every N / budget-per-second seconds, and a change waits on average half of that.
 */
export const boundMs = (runs: number): number => (runs / (2 * BUDGET_PER_SECOND)) * 1000;

/** service.md §3.6: no execution outlives 30 minutes; nothing can change after that. */
const DEADLINE_MS = 30 * 60_000;

/**
 * The N = 1 cell's runs, one after another: a run is 11 changes, too few for a median, so the cell
 * follows this many, each alone on the account (the next starts once the last has been followed to
 * its end), each by a client of its own as at every other N — as many changes as the N = 10 cell.
 */
export const RUNS_ALONE = 10;

export interface ManyRunsOptions {
  readonly sizes: readonly number[];
  /** Emulator ms per real ms, at most: the fixed loops of large N run slower (see `speedFor`). */
  readonly speed: number;
}

/**
 * Requests per real second a contender may ask of the in-process emulator. A request costs about
 * 1 ms of CPU (client and emulator in one process): a fixed loop of N runs asks N / period requests per
 * emulator second, so at `speed` it asks `speed` times that per real second, and past a few hundred
 * the event loop falls behind and the loop silently polls slower than its period. flowstream's budget
 * asks at most 100 a minute, so it runs at the full speed.
 */
const REAL_REQUESTS_PER_SECOND = 120;

export function speedFor(contender: Contender, runs: number, maxSpeed: number): number {
  if (contender.periodMs === undefined) return maxSpeed;
  const perEmulatorSecond = (runs * 1000) / contender.periodMs;
  return Math.min(maxSpeed, REAL_REQUESTS_PER_SECOND / perEmulatorSecond);
}

export interface ManyRunsRow {
  /** N: runs at once. */
  readonly runs: number;
  /** How many times N runs were followed, one batch after another (`RUNS_ALONE` at N = 1, else 1). */
  readonly rounds: number;
  readonly contender: string;
  /** Of runs × rounds. */
  readonly completed: number;
  /** Runs the service's own tool would have completed: it ends a watch at its first error (service.md §6). */
  readonly completedWithoutError: number;
  readonly requests: RequestCounts;
  readonly detection: Detection;
  readonly boundMs: number;
  readonly p50VersusBound: number | null;
  /** How long the contender took, first start to last result, in emulator ms. */
  readonly elapsedMs: number;
  /** Emulator ms per real ms of this row. */
  readonly speed: number;
}

export interface ManyRunsResult {
  readonly scenario: 'many-runs';
  readonly maxSpeed: number;
  readonly budgetPerSecond: number;
  readonly workflows: readonly WorkflowDefinition[];
  readonly rows: readonly ManyRunsRow[];
}

const FLOWSTREAM: readonly Contender[] = [FLOWSTREAM_STREAM, FLOWSTREAM_FINAL];
const CONTENDERS: readonly Contender[] = [...FLOWSTREAM, LOOP_2S, LOOP_1S];

async function measure(contender: Contender, runs: number, speed: number, workflows: readonly WorkflowDefinition[] = MANY_RUNS_VARIANTS, rounds = 1): Promise<ManyRunsRow> {
  const world = await openWorld({ speed, workflows });
  try {
    const sightings = new Sightings();
    const startedAt = world.time.now();
    const canvasIds = workflows.map((workflow) => workflow.canvasId!);
    let completed = 0;
    let completedWithoutError = 0;
    for (let round = 0; round < rounds; round++) {
      // Round r's run i is run r × N + i of the cell: its own variables, and the variant it would have among N × rounds at once.
      const firstItem = round * runs;
      const rotated = canvasIds.map((_, index) => canvasIds[(firstItem + index) % canvasIds.length]!);
      const outcome = await contender.follow(world, { canvasIds: rotated, runs, deadlineMs: DEADLINE_MS, sightings, firstItem });
      completed += outcome.completed;
      completedWithoutError += outcome.completedWithoutError;
    }
    const elapsedMs = world.time.now() - startedAt;
    const seen = detection(world.emulator.executions.list(), sightings);
    return {
      runs,
      rounds,
      contender: contender.name,
      completed,
      completedWithoutError,
      requests: world.requests(),
      detection: seen,
      boundMs: boundMs(runs),
      p50VersusBound: ratio(seen.latencyMs.p50, boundMs(runs)),
      elapsedMs,
      speed,
    };
  } finally {
    await world.close();
  }
}

/**
 * Every contender on its own emulator and account (its own rate-limit windows). The flowstream rows
 * run one at a time: side by side, the 200-run rows took the CPU from the others, whose accelerated
 * clocks then ran on while their event loop waited (N = 50 read p95 90 s beside them, 34 s alone).
 * Then, size after size, the two fixed loops side by side at the speed their request rate allows
 * (`speedFor`).
 */
export async function manyRuns(options: ManyRunsOptions): Promise<ManyRunsResult> {
  const cell = (contender: Contender, runs: number): Promise<ManyRunsRow> => measure(contender, runs, speedFor(contender, runs, options.speed), MANY_RUNS_VARIANTS, runs === 1 ? RUNS_ALONE : 1);
  const rows: ManyRunsRow[] = [];
  for (const runs of options.sizes) for (const contender of FLOWSTREAM) rows.push(await cell(contender, runs));
  for (const runs of options.sizes) rows.push(...(await Promise.all([LOOP_2S, LOOP_1S].map((contender) => cell(contender, runs)))));
  const order = (row: ManyRunsRow): number => options.sizes.indexOf(row.runs) * CONTENDERS.length + CONTENDERS.findIndex((contender) => contender.name === row.contender);
  return {
    scenario: 'many-runs',
    maxSpeed: options.speed,
    budgetPerSecond: BUDGET_PER_SECOND,
    workflows: MANY_RUNS_VARIANTS,
    rows: rows.sort((a, b) => order(a) - order(b)),
  };
}

/** The cells under `p50 s`, `p95 s`, `mean s`, `bound s` and `p50/bound`. */
const latencyCells = (row: ManyRunsRow): string[] => [
  seconds(row.detection.latencyMs.p50),
  seconds(row.detection.latencyMs.p95),
  seconds(row.detection.latencyMs.mean),
  seconds(row.boundMs),
  times(row.p50VersusBound),
];

export const MANY_RUNS_HEADERS = ['N', 'contender', 'completed', 'tool', '429s', 'requests', 'run', 'status', 'output', 'changes seen', 'p50 s', 'p95 s', 'mean s', 'bound s', 'p50/bound', 'took s', 'req/min', 'speed'] as const;

export function manyRunsTable(result: ManyRunsResult): string {
  return table(
    MANY_RUNS_HEADERS,
    result.rows.map((row) => [
      row.rounds > 1 ? `${String(row.runs)} (×${String(row.rounds)})` : String(row.runs),
      row.contender,
      `${row.completed}/${row.runs * row.rounds}`,
      `${row.completedWithoutError}/${row.runs * row.rounds}`,
      String(row.requests.rateLimited),
      String(row.requests.total),
      String(row.requests.byEndpoint.run ?? 0),
      String(row.requests.byEndpoint.status ?? 0),
      String(row.requests.byEndpoint.output ?? 0),
      `${row.detection.seen}/${row.detection.changes}`,
      ...latencyCells(row),
      (row.elapsedMs / 1000).toFixed(0),
      ((row.requests.total / row.elapsedMs) * 60_000).toFixed(0),
      `${Number(row.speed.toFixed(2))}×`,
    ]),
    2,
  );
}

/** The headline workflow's variants with its first node lasting `planMs` (before the variants' spread). */
const variantsWithPlan = (planMs: number): readonly WorkflowDefinition[] =>
  variantsOf({ ...MANY_RUNS_WORKFLOW, nodes: MANY_RUNS_WORKFLOW.nodes.map((node) => (node.id === 'node-plan' ? { ...node, durationMs: planMs } : node)) });

export interface PhaseSweepOptions {
  readonly runs: number;
  /** Durations of the first node to try, ms. */
  readonly planMs: readonly number[];
  readonly speed: number;
}

export interface PhaseSweepRow extends ManyRunsRow {
  readonly planMs: number;
}

/**
 * How much the bound comparison owes to one phase. N runs started at once are polled in the order
 * they started, one round every N sends, so a change that comes about the same time after every
 * start (the first node's end, within the variants' ±15%) falls at about the same point of that round
 * for every run: seen soon when the round comes right after it, most of a round late when the round
 * has just passed. The headline workflow's 40 s first node is one such phase; this runs flowstream on
 * the same workflow with other first-node durations, every other node as it was. One run per cell:
 * read the spread between durations against the spread between the two contenders of one duration.
 */
export async function phaseSweep(options: PhaseSweepOptions): Promise<readonly PhaseSweepRow[]> {
  const rows: PhaseSweepRow[] = [];
  for (const planMs of options.planMs) {
    for (const contender of FLOWSTREAM) rows.push({ planMs, ...(await measure(contender, options.runs, options.speed, variantsWithPlan(planMs))) });
  }
  return rows;
}

export const PHASE_SWEEP_HEADERS = ['first node s', 'contender', 'completed', '429s', 'requests', 'p50 s', 'p95 s', 'mean s', 'bound s', 'p50/bound', 'took s'] as const;

export function phaseSweepTable(rows: readonly PhaseSweepRow[]): string {
  return table(
    PHASE_SWEEP_HEADERS,
    rows.map((row) => [
      (row.planMs / 1000).toFixed(0),
      row.contender,
      `${row.completed}/${row.runs}`,
      String(row.requests.rateLimited),
      String(row.requests.total),
      ...latencyCells(row),
      (row.elapsedMs / 1000).toFixed(0),
    ]),
    2,
  );
}
