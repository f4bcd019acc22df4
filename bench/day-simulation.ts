import type { Subscription } from 'rxjs';
import { createManualClock, driveClock, type WorkflowDefinition } from '../src/emulator/index.js';
import type { RequestBudgetOptions } from '../src/domain/options.js';
import type { Runs } from '../src/runs/runs.js';
import type { OutputMode } from '../src/runs/poll.js';
import { followWithFixedLoop } from './harness/contenders.js';
import { seconds, table } from './harness/report.js';
import { Sightings } from './harness/sightings.js';
import { summarize, type Summary } from './harness/stats.js';
import { variantOf } from './harness/variants.js';
import { type FlowstreamOptions, openWorld, type World } from './harness/world.js';

/**
 * The 24-hour simulation: an always-on service on one account with the service's limits
 * (service.md §2.1: 100 requests a minute, 10,000 a day), the emulator and the client on one manual
 * clock (`driveClock`), so a whole day passes in seconds and no result depends on the machine's speed.
 */

const CANVAS_ID = 'c-bench-day';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** service.md §2.1. */
const PER_DAY = 10_000;
/** A finished run unseen for longer than this counts as blind time. */
const BLIND_AFTER_MS = 10 * MINUTE;
/** service.md §3.6: no execution outlives 30 minutes. */
const DEADLINE_MS = 30 * MINUTE;

/** Two task nodes of two minutes each: the 4-minute, 2-node workflow of the day simulation. */
export const DAY_WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS_ID,
  title: 'Bench: an always-on service, all day',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-gather', parents: ['node-start'], durationMs: 2 * MINUTE, messages: [{ content: 'gathered' }] },
    { id: 'node-write', parents: ['node-gather'], durationMs: 2 * MINUTE, messages: [{ content: 'written' }] },
  ],
};

/**
 * The runs' timelines: `VARIANTS` versions of the workflow, each duration moved by a seeded ±10%, run
 * `item` starting variant `item % VARIANTS`. Exact 2-minute nodes would settle on a multiple of both the
 * service's 1.5 s tick and a 2 s loop's period, and hand the loop a latency of 0.
 */
const VARIANTS = 16;
export const DAY_VARIANTS: readonly WorkflowDefinition[] = Array.from({ length: VARIANTS }, (_, variant) =>
  variantOf(DAY_WORKFLOW, variant + 1, (durationMs) => 0.1 * durationMs, `${CANVAS_ID}-${variant}`),
);

/** When runs arrive over the day, in ms from its start. */
export interface Arrivals {
  readonly name: string;
  readonly description: string;
  readonly at: readonly number[];
}

const every = (periodMs: number, count: number, batch = 1): number[] =>
  Array.from({ length: Math.ceil(DAY / periodMs) }, (_, slot) => Array.from({ length: batch }, () => slot * periodMs)).flat().slice(0, count);

export const DAY_SCENARIOS: readonly Arrivals[] = [
  { name: 'steady', description: '(a) a run every minute, all day', at: every(MINUTE, 24 * 60) },
  { name: 'bursts', description: '(b) 50 runs at once every two hours', at: every(2 * HOUR, 12 * 50, 50) },
  { name: 'hourly', description: '(c) one run an hour', at: every(HOUR, 24) },
];

/** How one contender follows run `item`, of `canvasId`, that arrives now: it records what it sees in `sightings`. */
type Follow = (world: World, item: number, canvasId: string, sightings: Sightings) => { readonly stop: () => void };

export interface DayContender {
  readonly name: string;
  /** Made once per world: a contender's state (its budget) lasts the whole day. */
  readonly open: (world: World) => Follow;
}

/** flowstream as a new user runs it: one client, default options, a run per arrival. */
export const FLOWSTREAM_DAY: DayContender = flowstreamDay('flowstream');

/**
 * The budget as it was before it paced the day: the minute paced, the day only counted — no day bucket, no
 * reserve (`dayBurst` all of the day, `dayReserve` 0) — for the same table.
 */
export const FLOWSTREAM_DAY_UNPACED: DayContender = flowstreamDay('flowstream, day unpaced (before day pacing)', { dayBurst: 0.999, dayReserve: 0 });

/** flowstream with one client for the whole day: `budget`, the client's other `options` and each run's `output` as given (default a run's own: `stream`). */
export function flowstreamDay(name: string, budget: RequestBudgetOptions = {}, options: FlowstreamOptions = {}, output?: OutputMode): DayContender {
  return {
  name,
  open: (world) => {
    const runs: Runs = world.flowstream(budget, options);
    return (_world, item, canvasId, sightings) => {
      const subscription: Subscription = runs.run(canvasId, { variables: { item } }, output === undefined ? {} : { output }).subscribe({
        next: (event) => {
          if (event.type === 'finished') sightings.see(event.executionId, world.time.now(), { status: event.result.status });
        },
        error: () => undefined,
      });
      return { stop: () => { subscription.unsubscribe(); } };
    };
  },
  };
}

/** The service's own tool (service.md §6): a fixed 2 s status loop per run, no budget. */
export const LOOP_2S_DAY: DayContender = {
  name: 'fixed 2 s loop',
  open: () => (world, item, canvasId, sightings) => {
    void followWithFixedLoop(world, { canvasIds: [canvasId], runs: 1, deadlineMs: DEADLINE_MS, sightings, firstItem: item }, 2_000);
    return { stop: () => undefined };
  },
};

export interface DayRow {
  readonly scenario: string;
  readonly contender: string;
  readonly runs: number;
  /** Runs whose end the client saw. */
  readonly seenToEnd: number;
  /** From the execution settling (emulator) to the client knowing, emulator ms. */
  readonly latency: Summary;
  readonly requests: number;
  readonly rateLimited: number;
  /** The account's lowest daily remaining count over the day (the day window starts at the first request, service.md §2.1). */
  readonly lowestDailyRemaining: number;
  /** Minutes during which some finished run had been unseen for more than 10 minutes. */
  readonly minutesBlind: number;
  /** Requests the account still had at the end of the day: aborts that could still be sent. */
  readonly abortsPossibleAtEnd: number;
  readonly realMs: number;
}

/** The total length of a union of intervals, in ms. */
function unionLength(intervals: readonly (readonly [number, number])[]): number {
  const sorted = intervals.filter(([from, to]) => to > from).toSorted((a, b) => a[0] - b[0]);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [from, to] of sorted) {
    if (to <= end) continue;
    total += to - Math.max(from, end);
    end = to;
  }
  return total;
}

/** One contender through one scenario's day, on a fresh account; run `item` starts `workflows[item % workflows.length]`. */
export async function simulateDay(scenario: Arrivals, contender: DayContender, workflows: readonly WorkflowDefinition[] = DAY_VARIANTS): Promise<DayRow> {
  const realStart = performance.now();
  const clock = createManualClock();
  const world = await openWorld({ speed: 0, clock, workflows });
  const canvasIds = workflows.map((workflow) => workflow.canvasId!);
  const canvasOf = (item: number): string => canvasIds[item % canvasIds.length]!;
  const sightings = new Sightings();
  const follow = contender.open(world);
  const startedAt = clock.now();
  const running: { stop: () => void }[] = [];
  scenario.at.forEach((offset, item) => {
    world.emulator.scheduler.schedule(() => {
      running.push(follow(world, item, canvasOf(item), sightings));
    }, offset);
  });
  const endAt = startedAt + DAY;
  await driveClock(clock, { toTime: endAt });

  const accepted = world.emulator.requests.list().filter((request) => request.status !== 429);
  const executions = world.emulator.executions.list();
  const latencies: number[] = [];
  const blind: [number, number][] = [];
  let seenToEnd = 0;
  for (const execution of executions) {
    const settle = sightings.changes(execution).find((change) => change.key === 'settle');
    if (settle === undefined) continue;
    if (settle.latencyMs !== undefined) {
      seenToEnd += 1;
      latencies.push(settle.latencyMs);
    }
    const seenAt = settle.latencyMs === undefined ? endAt : settle.at + settle.latencyMs;
    blind.push([Math.min(endAt, settle.at + BLIND_AFTER_MS), Math.min(endAt, seenAt)]);
  }
  const counts = world.requests();
  const row: DayRow = {
    scenario: scenario.name,
    contender: contender.name,
    runs: scenario.at.length,
    seenToEnd,
    latency: summarize(latencies),
    requests: counts.total,
    rateLimited: counts.rateLimited,
    lowestDailyRemaining: Math.max(0, PER_DAY - accepted.length),
    minutesBlind: unionLength(blind) / MINUTE,
    abortsPossibleAtEnd: Math.max(0, PER_DAY - accepted.filter((request) => request.emulatorTime > endAt - DAY).length),
    realMs: performance.now() - realStart,
  };
  for (const run of running) run.stop();
  await world.close();
  return row;
}

export async function daySimulation(contenders: readonly DayContender[], scenarios: readonly Arrivals[] = DAY_SCENARIOS): Promise<{ readonly rows: readonly DayRow[] }> {
  const rows: DayRow[] = [];
  for (const scenario of scenarios) for (const contender of contenders) rows.push(await simulateDay(scenario, contender));
  return { rows };
}

export function daySimulationTable(rows: readonly DayRow[]): string {
  return table(
    ['scenario', 'contender', 'runs seen to their end', 'latency p50 (s)', 'latency p99 (s)', 'requests', '429s', 'lowest daily remaining', 'minutes blind', 'aborts possible at the end', 'real s'],
    rows.map((row) => [
      row.scenario,
      row.contender,
      `${row.seenToEnd}/${row.runs}`,
      seconds(row.latency.p50),
      seconds(row.latency.p99),
      String(row.requests),
      String(row.rateLimited),
      String(row.lowestDailyRemaining),
      row.minutesBlind.toFixed(0),
      String(row.abortsPossibleAtEnd),
      (row.realMs / 1000).toFixed(1),
    ]),
  );
}
