import { mulberry32 } from '../src/emulator/engine/seeded-random.js';
import { pathToFileURL } from 'node:url';
import { createDurationModel } from '../src/budget/duration-model.js';
import type { DurationsView } from '../src/domain/durations.js';
import type { RequestBudgetOptions } from '../src/domain/options.js';
import { createManualClock, driveClock, type ManualClock, type WorkflowDefinition } from '../src/emulator/index.js';
import type { Runs } from '../src/runs/runs.js';
import type { OutputMode } from '../src/runs/poll.js';
import { DAY_SCENARIOS, DAY_WORKFLOW, type DayContender, type DayRow, daySimulationTable, flowstreamDay, simulateDay } from './day-simulation.js';
import { type Assignment, followWithFixedLoop, followWithFlowstream } from './harness/contenders.js';
import { type Detection, detectionOf, seconds, table, times, writeResults } from './harness/report.js';
import { type Change, Sightings } from './harness/sightings.js';
import { ratio } from './harness/stats.js';
import { type FlowstreamOptions, openWorld, type RequestCounts, type World } from './harness/world.js';
import { boundMs } from './many-runs.js';

/**
 * The benchmark of learned node durations. One canvas run again and again, its node durations
 * drawn per execution by the emulator (`durationCv`: a log-normal with the scripted mean and that
 * coefficient of variation), followed by flowstream with a duration model and without one, and, for
 * N = 1, by the fixed 1 s and 2 s loops. Every contender has its own emulator and account with the
 * service's limits (service.md §2.1: 100 requests a minute, 10,000 a day), and the emulator and the
 * client share one manual clock (`driveClock`): nothing depends on the machine's speed, and a row
 * takes seconds. Every time printed is emulator time. `npx tsx bench/learned-durations.ts` runs it alone.
 *
 * The workflow: three task nodes in a chain, of mean 4, 6 and 5 minutes — long enough that every N is
 * meaningful at 100 reads a minute (N = 200 runs end about 40 nodes a minute, against 100 reads), short
 * enough that a run stays inside the service's 30-minute limit (service.md §3.6): at cv 0.6, 1.3% of the
 * executions still time out, and as many again end too close to the 30 minutes for a client to see
 * them before its deadline (30 minutes from its subscription): the same executions for every contender.
 *
 * flowstream follows with `output: 'final'`: only the status is read while a run works, so every read
 * the model times is a status read, and the output is read once at the end.
 *
 * Rows: cv 0.3 and 0.6, N = 1, 10, 50, 200, two phases. Cold: a fresh model, the N runs started at once.
 * Warm: in the same world, first `WARM_UP_RUNS` runs of the canvas followed to their end — started at
 * once, a fan-out, for every N (`LEARNED_WARM_UP=one-by-one`: each when the last has ended) — then a
 * rest (below), then a fresh batch of N runs: the one measured, its detection latencies and its requests only. flowstream without a model
 * follows the same warm-up, so the two compare like with like. The fixed loops learn nothing, and
 * following 20 runs at once at 1 s would spend the warm-up on 429s (20 reads a second against 100 a
 * minute): they only start the warm-up's executions and wait for their end, so that the measured runs
 * are the same executions (the same drawn durations: the emulator seeds a draw with the execution's
 * rank among the canvas's executions) for every contender. N = 1 is measured `ALONE_REPETITIONS`
 * times, each in a world of its own on a canvas of its own (other draws): one run has only 7 changes.
 *
 * The budget. The bound (many-runs.ts `boundMs`) is N runs sharing 100 reads a minute; but a client's
 * default budget also paces the day: after a burst of 950 requests it sends what the day
 * sustains, about 6.6 a minute. N = 50 and 200 runs of 15 minutes spend that burst within the batch
 * (a cold N = 50 batch sends about 1,100), and the warm-up spends it before the batch. So the main rows
 * give flowstream the minute's pace alone (`dayBurst: 0.999`, as day-simulation.ts's "day unpaced"),
 * which the bound assumes; the emulator still counts the day, and no row comes near it (a warm N = 200
 * row sends about 3,500 requests in all). A second table runs the warm rows with the default budget,
 * as a user gets it. Either way a warm row rests a day after its warm-up (`REST_AFTER_WARM_UP_MS`), so
 * that the measured batch meets an account with nothing spent, as a cold one does: a warm row measures
 * what the model learned, not what the warm-up spent (a warm-up of 20 runs at once spends the day's
 * burst of 950). Not so one by one: without a model that warm-up spends 9,400 of the day's 10,000, and
 * the budget's day bucket then refills through the whole idle day at the rate it had when the warm-up
 * ended (0.11 a minute: nothing recomputes it while nothing is sent), so the measured batch starts with
 * about 1,300 tokens, not the burst: `LEARNED_WARM_UP=one-by-one` is for the model's rows.
 *
 * Then the day simulation's "a run every minute, all day" (day-simulation.ts) with the two nodes varying, the
 * model on and off, the default budget (the day is where its pacing belongs), each run with `output:
 * 'stream'` (the day simulation's) and `'final'`.
 */

const CANVAS_ID = 'c-bench-learned';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** service.md §3.6: no execution outlives 30 minutes; nothing can change after that. */
const DEADLINE_MS = 30 * MINUTE;
/** Runs that teach the model before a warm row's measured batch: many more than the model needs to leave its cold start. */
export const WARM_UP_RUNS = 20;
/**
 * How the warm-up's runs go: all at once (the default: a fan-out, the way a batch of runs of one canvas
 * is started; they end, and are learned, shortest first), or one after another
 * (`LEARNED_WARM_UP=one-by-one`: the model learns them in the order they were started).
 */
export type WarmUpOrder = 'at once' | 'one by one';
const WARM_UP_ORDER: WarmUpOrder = process.env['LEARNED_WARM_UP'] === 'one-by-one' ? 'one by one' : 'at once';
/**
 * A day: the warm-up's requests then have left the client's sliding windows and the service's fixed
 * day window (service.md §2.1) has turned, so the measured batch meets the account as a cold one does.
 */
const REST_AFTER_WARM_UP_MS = 24 * HOUR;
/** N = 1 rows: this many single runs, each in its own world. */
export const ALONE_REPETITIONS = 12;

/** N = 10 is measured this many times (70 changes a batch: one batch's p50 moved by ±0.35× of the bound from run to run). */
export const TEN_REPETITIONS = 5;

/**
 * Runs `work` with `Math.random` (the client's jitter) drawn from a seeded generator, the same for
 * every contender of a cell: the rows differ by the contenders, not by their luck.
 */
async function withSeededJitter<T>(seed: number, work: () => Promise<T>): Promise<T> {
  const random = Math.random;
  Math.random = mulberry32(seed);
  try {
    return await work();
  } finally {
    Math.random = random;
  }
}

export const LEARNED_CVS = [0.3, 0.6] as const;
export const LEARNED_SIZES = [1, 10, 50, 200] as const;
export const PHASES = ['cold', 'warm'] as const;
export type Phase = (typeof PHASES)[number];

/** The budgets flowstream is measured with: the minute's pace alone (the main rows), or the client's default, which also paces the day. */
export type BudgetName = 'minute' | 'default';
const BUDGETS: Readonly<Record<BudgetName, RequestBudgetOptions>> = { minute: { dayBurst: 0.999 }, default: {} };

/** The chain of three nodes of mean 4, 6 and 5 minutes, each duration varying with coefficient `cv`. */
export function learnedWorkflow(cv: number, canvasId = CANVAS_ID): WorkflowDefinition {
  return {
    canvasId,
    title: 'Bench: one workflow run again and again, its durations varying',
    nodes: [
      { id: 'node-start', type: 'start' },
      { id: 'node-gather', parents: ['node-start'], durationMs: 4 * MINUTE, durationCv: cv, messages: [{ content: 'gathered' }] },
      { id: 'node-write', parents: ['node-gather'], durationMs: 6 * MINUTE, durationCv: cv, messages: [{ content: 'written' }] },
      { id: 'node-review', parents: ['node-write'], durationMs: 5 * MINUTE, durationCv: cv, messages: [{ content: 'reviewed' }] },
    ],
  };
}

/** One way of following the canvas's runs. */
interface LearnedContender {
  readonly name: string;
  /** Fixed loops: N = 1 rows only. */
  readonly onlyAlone: boolean;
  /** Whether it goes through a budget (flowstream) or not (the fixed loops, service.md §6). */
  readonly budgeted: boolean;
  /** Opened once per world: its state (client, budget, model) lasts through the warm-up and the measured batch. */
  open(world: World, budget: RequestBudgetOptions): Follower;
}

interface Follower {
  /** What its duration model knows now; undefined without one. */
  learned(): DurationsView | undefined;
  /** Follows the assignment's runs to their end; how many it saw finish. */
  follow(assignment: Assignment): Promise<number>;
  /** The warm-up: the `WARM_UP_RUNS` runs of the canvas before the measured batch. */
  warmUp(assignment: Assignment): Promise<void>;
}

/** flowstream with the client `options` gives, made afresh for every world: no model outlives its world. */
function flowstreamContender(name: string, options: () => FlowstreamOptions): LearnedContender {
  return {
    name,
    onlyAlone: false,
    budgeted: true,
    open: (world, budget) => {
      // One client for both batches: what it learned in the warm-up is there for the measured one.
      const clientOptions = options();
      const runs: Runs = world.flowstream(budget, clientOptions);
      const follow = async (assignment: Assignment): Promise<number> => (await followWithFlowstream(world, assignment, 'final', runs)).completed;
      return {
        learned: () => (clientOptions.durations === undefined || clientOptions.durations === false ? undefined : clientOptions.durations.snapshot()),
        follow,
        warmUp: async (assignment) => {
          await follow(assignment);
        },
      };
    },
  };
}

/** The service's own tool (service.md §6) at `periodMs`; it has no budget. */
function loopContender(periodMs: number): LearnedContender {
  return {
    name: `fixed ${String(periodMs / 1000)} s loop`,
    onlyAlone: true,
    budgeted: false,
    open: (world) => ({
      learned: () => undefined,
      follow: async (assignment) => (await followWithFixedLoop(world, assignment, periodMs)).completed,
      warmUp: async (assignment) => {
        const http = world.plain();
        for (let item = 0; item < assignment.runs; item += 1) {
          await http.executions.start(assignment.canvasIds[0]!, { variables: { item: (assignment.firstItem ?? 0) + item } });
        }
        // Emulator time passes while the caller drives the clock; no request is made.
        while (world.emulator.executions.list().some((execution) => execution.status === 'executing')) await world.time.sleep(MINUTE);
      },
    }),
  };
}

const FLOWSTREAM_MODEL = flowstreamContender('flowstream (model)', () => ({ durations: createDurationModel() }));
const FLOWSTREAM_NO_MODEL = flowstreamContender('flowstream (no model)', () => ({ durations: false }));
const LOOP_1S = loopContender(1_000);
const LOOP_2S = loopContender(2_000);
const CONTENDERS: readonly LearnedContender[] = [FLOWSTREAM_MODEL, FLOWSTREAM_NO_MODEL, LOOP_1S, LOOP_2S];

/** `work` to its end, `clock` driven meanwhile: time moves only when nothing else can. */
async function driven<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  await driveClock(clock, { until: () => done });
  return settled;
}

/** What one world measured of its batch. */
interface BatchMeasure {
  /** What the contender's model knew when the batch started. */
  readonly learned: DurationsView | undefined;
  readonly completed: number;
  readonly requests: RequestCounts;
  readonly changes: readonly Change[];
  readonly elapsedMs: number;
}

/** One batch of `runs` runs of `canvasId`, after the warm-up when warm, on a fresh account. */
async function measureBatch(contender: LearnedContender, budget: RequestBudgetOptions, cv: number, runs: number, phase: Phase, canvasId: string): Promise<BatchMeasure> {
  const clock = createManualClock();
  const world = await openWorld({ speed: 0, clock, workflows: [learnedWorkflow(cv, canvasId)] });
  try {
    const follower = contender.open(world, budget);
    const assignment = (count: number, firstItem: number, sightings: Sightings): Assignment => ({ canvasIds: [canvasId], runs: count, deadlineMs: DEADLINE_MS, sightings, firstItem });
    if (phase === 'warm') {
      const groups = WARM_UP_ORDER === 'at once' ? [{ first: 0, count: WARM_UP_RUNS }] : Array.from({ length: WARM_UP_RUNS }, (_, first) => ({ first, count: 1 }));
      for (const { first, count } of groups) await driven(clock, follower.warmUp(assignment(count, first, new Sightings())));
      await driveClock(clock, { toTime: clock.now() + REST_AFTER_WARM_UP_MS });
    }
    const learned = follower.learned();
    const lastBefore = world.emulator.requests.list().at(-1)?.sequence ?? 0;
    const measuredFrom = clock.now();
    const sightings = new Sightings();
    const completed = await driven(clock, follower.follow(assignment(runs, WARM_UP_RUNS, sightings)));
    const measured = world.emulator.executions.list().filter((execution) => execution.createdAt >= measuredFrom);
    return {
      learned,
      completed,
      requests: world.requests({ after: lastBefore }),
      changes: measured.flatMap((execution) => sightings.changes(execution)),
      elapsedMs: clock.now() - measuredFrom,
    };
  } finally {
    await world.close();
  }
}

export interface LearnedRow {
  /** flowstream's budget; `none` for the fixed loops, which have none. */
  readonly budget: BudgetName | 'none';
  readonly cv: number;
  readonly runs: number;
  readonly phase: Phase;
  readonly contender: string;
  /** Batches measured: `ALONE_REPETITIONS` for N = 1, `TEN_REPETITIONS` for N = 10, else 1; every count below is over all of them. */
  readonly batches: number;
  /** Measured runs whose client saw them finish (an execution that timed out is not). */
  readonly completed: number;
  /** The measured batches' requests (from their first start on), per endpoint, and their 429s. */
  readonly requests: RequestCounts;
  /** Detection latencies of the measured runs' changes: task nodes starting and ending, the execution settling. */
  readonly detection: Detection;
  readonly boundMs: number;
  /** p50 ÷ the physical bound of N runs sharing 100 reads a minute (many-runs.ts `boundMs`). */
  readonly p50VsBound: number | null;
  /** N = 1: mean latency ÷ the fixed 1 s loop's in the same cv and phase; null otherwise. */
  readonly meanVs1sLoop: number | null;
  /** N = 1: requests ÷ the fixed 2 s loop's in the same cv and phase; null otherwise. */
  readonly requestsVs2sLoop: number | null;
  /** What the model knew when the (first) measured batch started: null for a contender without one. */
  readonly modelAtStart: DurationsView | null;
  /** First start of a measured batch to its last result, emulator ms; the mean over the batches. */
  readonly elapsedMs: number;
  readonly realMs: number;
}

type MeasuredRow = Omit<LearnedRow, 'meanVs1sLoop' | 'requestsVs2sLoop'>;

function addCounts(a: RequestCounts, b: RequestCounts): RequestCounts {
  const byEndpoint = { ...a.byEndpoint };
  for (const [endpoint, count] of Object.entries(b.byEndpoint) as [keyof RequestCounts['byEndpoint'], number][]) byEndpoint[endpoint] = (byEndpoint[endpoint] ?? 0) + count;
  return { total: a.total + b.total, byEndpoint, rateLimited: a.rateLimited + b.rateLimited };
}

/** One row: one contender, budget, cv, N and phase. */
async function measure(contender: LearnedContender, budgetName: BudgetName, cv: number, runs: number, phase: Phase): Promise<MeasuredRow> {
  const realStart = performance.now();
  const batches = runs === 1 ? ALONE_REPETITIONS : runs === 10 ? TEN_REPETITIONS : 1;
  const measures: BatchMeasure[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    const canvasId = batches === 1 ? CANVAS_ID : `${CANVAS_ID}-${String(batch)}`;
    measures.push(await withSeededJitter(runs * 1_000 + batch + Math.round(cv * 10), () => measureBatch(contender, BUDGETS[budgetName], cv, runs, phase, canvasId)));
  }
  const seen = detectionOf(measures.flatMap((measured) => measured.changes));
  return {
    budget: contender.budgeted ? budgetName : 'none',
    cv,
    runs,
    phase,
    contender: contender.name,
    batches,
    completed: measures.reduce((sum, measured) => sum + measured.completed, 0),
    requests: measures.map((measured) => measured.requests).reduce(addCounts),
    detection: seen,
    boundMs: boundMs(runs),
    p50VsBound: ratio(seen.latencyMs.p50, boundMs(runs)),
    modelAtStart: measures[0]?.learned ?? null,
    elapsedMs: measures.reduce((sum, measured) => sum + measured.elapsedMs, 0) / batches,
    realMs: performance.now() - realStart,
  };
}

/** The ratios of N = 1 rows to the fixed loops of the same cv and phase (`loops`, default among `cells`); null for other N. */
function withLoopRatios(cells: readonly MeasuredRow[], loops: readonly MeasuredRow[] = cells): LearnedRow[] {
  const loop = (name: string): MeasuredRow | undefined => loops.find((cell) => cell.contender === name);
  const [loop1s, loop2s] = [loop(LOOP_1S.name), loop(LOOP_2S.name)];
  return cells.map((cell) => ({
    ...cell,
    meanVs1sLoop: ratio(cell.detection.latencyMs.mean, loop1s?.detection.latencyMs.mean ?? null),
    requestsVs2sLoop: ratio(cell.requests.total, loop2s?.requests.total ?? null),
  }));
}

/**
 * The main rows (the minute's budget, every contender, both phases), then the warm rows with the
 * default budget (flowstream only). One at a time: each world has its own manual clock, so the order
 * changes nothing but the wall time.
 */
export async function learnedDurations(): Promise<{ readonly rows: readonly LearnedRow[]; readonly defaultBudgetRows: readonly LearnedRow[] }> {
  const rows: LearnedRow[] = [];
  const defaultBudgetRows: LearnedRow[] = [];
  for (const cv of LEARNED_CVS) {
    for (const runs of LEARNED_SIZES) {
      for (const phase of PHASES) {
        const cells: MeasuredRow[] = [];
        for (const contender of CONTENDERS) if (runs === 1 || !contender.onlyAlone) cells.push(await measure(contender, 'minute', cv, runs, phase));
        rows.push(...withLoopRatios(cells));
      }
      const warm: MeasuredRow[] = [];
      for (const contender of [FLOWSTREAM_MODEL, FLOWSTREAM_NO_MODEL]) warm.push(await measure(contender, 'default', cv, runs, 'warm'));
      defaultBudgetRows.push(...withLoopRatios(warm, rows.filter((row) => row.cv === cv && row.runs === runs && row.phase === 'warm')));
    }
  }
  return { rows, defaultBudgetRows };
}

export const LEARNED_HEADERS = ['cv', 'N', 'phase', 'contender', 'completed', '429s', 'requests', 'status', 'output', 'changes seen', 'p50 s', 'p95 s', 'mean s', 'bound s', 'p50/bound', 'mean/1 s loop', 'requests/2 s loop', 'samples', 'took s'] as const;

/** The fewest durations the model held for a node of the canvas when the batch started; `—` without a model. */
const samplesCell = (model: DurationsView | null): string => (model === null ? '—' : String(model.nodes.length === 0 ? 0 : Math.min(...model.nodes.map((node) => node.samples))));

export function learnedDurationsTable(rows: readonly LearnedRow[]): string {
  return table(
    LEARNED_HEADERS,
    rows.map((row) => [
      String(row.cv),
      row.batches === 1 ? String(row.runs) : `${String(row.runs)} ×${String(row.batches)}`,
      row.phase,
      row.contender,
      `${String(row.completed)}/${String(row.runs * row.batches)}`,
      String(row.requests.rateLimited),
      String(row.requests.total),
      String(row.requests.byEndpoint.status ?? 0),
      String(row.requests.byEndpoint.output ?? 0),
      `${String(row.detection.seen)}/${String(row.detection.changes)}`,
      seconds(row.detection.latencyMs.p50),
      seconds(row.detection.latencyMs.p95),
      seconds(row.detection.latencyMs.mean),
      seconds(row.boundMs),
      times(row.p50VsBound),
      times(row.meanVs1sLoop),
      times(row.requestsVs2sLoop),
      samplesCell(row.modelAtStart),
      (row.elapsedMs / 1000).toFixed(0),
    ]),
    4,
  );
}

/** The day simulation's workflow (two 2-minute nodes) with both durations varying with coefficient `cv`, on a canvas of its own. */
export function learnedDayWorkflow(cv: number): WorkflowDefinition {
  return {
    ...DAY_WORKFLOW,
    canvasId: `c-bench-day-learned-${String(cv)}`,
    nodes: DAY_WORKFLOW.nodes.map((node) => (node.durationMs === undefined ? node : { ...node, durationCv: cv })),
  };
}

export interface LearnedDayRow extends DayRow {
  readonly cv: number;
  readonly output: OutputMode;
}

/**
 * "A run every minute, all day" (day-simulation.ts), the day's two nodes varying, flowstream with its
 * model and without, the default budget; each run with `output: 'stream'` (a run's default, as the day
 * simulation measures it) and with `output: 'final'` (as the rows above): when the day's pace binds, every
 * read counts, and in `stream` a node end seen on its own costs an output read besides.
 */
export async function learnedDay(): Promise<readonly LearnedDayRow[]> {
  const steady = DAY_SCENARIOS.find((scenario) => scenario.name === 'steady');
  if (steady === undefined) throw new Error('day-simulation.ts has no "steady" scenario');
  const rows: LearnedDayRow[] = [];
  for (const cv of LEARNED_CVS) {
    for (const output of ['stream', 'final'] as const) {
      // Made per day: no model outlives its day.
      const contenders: readonly DayContender[] = [
        flowstreamDay(`flowstream (model), cv ${String(cv)}, ${output}`, {}, { durations: createDurationModel() }, output),
        flowstreamDay(`flowstream (no model), cv ${String(cv)}, ${output}`, {}, { durations: false }, output),
      ];
      for (const contender of contenders) rows.push({ cv, output, ...(await simulateDay(steady, contender, [learnedDayWorkflow(cv)])) });
    }
  }
  return rows;
}

export interface LearnedDurationsResult {
  readonly scenario: 'learned-durations';
  readonly warmUpRuns: number;
  readonly warmUpOrder: WarmUpOrder;
  readonly restAfterWarmUpMs: number;
  readonly aloneRepetitions: number;
  readonly budgets: Readonly<Record<BudgetName, RequestBudgetOptions>>;
  readonly workflows: readonly WorkflowDefinition[];
  /** The minute's budget: every contender, both phases. */
  readonly rows: readonly LearnedRow[];
  /** The client's default budget (the day paced too): flowstream's warm rows. */
  readonly defaultBudgetRows: readonly LearnedRow[];
  readonly day: { readonly workflows: readonly WorkflowDefinition[]; readonly rows: readonly LearnedDayRow[] };
  readonly realMs: number;
}

/** Every row and the day, printed as tables and written to `bench/results/learned-durations.json`. */
export async function learnedDurationsReport(): Promise<LearnedDurationsResult> {
  const began = performance.now();
  const { rows, defaultBudgetRows } = await learnedDurations();
  const day = await learnedDay();
  const result: LearnedDurationsResult = {
    scenario: 'learned-durations',
    warmUpRuns: WARM_UP_RUNS,
    warmUpOrder: WARM_UP_ORDER,
    restAfterWarmUpMs: REST_AFTER_WARM_UP_MS,
    aloneRepetitions: ALONE_REPETITIONS,
    budgets: BUDGETS,
    workflows: LEARNED_CVS.map((cv) => learnedWorkflow(cv)),
    rows,
    defaultBudgetRows,
    day: { workflows: LEARNED_CVS.map(learnedDayWorkflow), rows: day },
    realMs: performance.now() - began,
  };
  console.log(
    `\nLearned durations: one canvas run again and again, three chained nodes of mean 4, 6 and 5 min, each drawn per execution (log-normal, coefficient of variation cv); cold: a fresh model; warm: after ${String(WARM_UP_RUNS)} runs of the canvas (${WARM_UP_ORDER}) and a rest of ${String(REST_AFTER_WARM_UP_MS / HOUR)} h; N = 1: ${String(ALONE_REPETITIONS)} single runs, each in a world of its own; flowstream with output 'final' and the minute's budget alone (dayBurst 0.999); one account per contender (100/min, 10,000/day), a manual clock; latencies in emulator seconds\n`,
  );
  console.log(learnedDurationsTable(rows));
  console.log('\nThe warm rows again with the client\'s default budget, which also paces the day (a burst of 950 requests, then about 6.6 a minute); ratios to the loops of the table above\n');
  console.log(learnedDurationsTable(defaultBudgetRows));
  console.log('\nA run every minute, all day, with learned durations: the day\'s two 2-minute nodes varying, flowstream with and without its model, the default budget, output \'stream\' (a run\'s default) and \'final\'; "minutes blind": some finished run unseen for over 10 minutes\n');
  console.log(daySimulationTable(day));
  console.log(`→ ${await writeResults('learned-durations', result)} (${(result.realMs / 1000).toFixed(0)} s of real time)`);
  return result;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) await learnedDurationsReport();
