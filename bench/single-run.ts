import type { WorkflowDefinition } from '../src/emulator/index.js';
import { type Contender, FLOWSTREAM_FINAL, FLOWSTREAM_STREAM, LOOP_1S, LOOP_2S } from './harness/contenders.js';
import { type Detection, detection, seconds, table, times } from './harness/report.js';
import { Sightings } from './harness/sightings.js';
import { variantOf } from './harness/variants.js';
import { ratio } from './harness/stats.js';
import { openWorld, type RequestCounts } from './harness/world.js';

/**
 * The single-run scripted timeline: a short run (about 16 s) with a parallel branch and a short last node —
 * research 4.3 s; outline 2.6 s beside sources 6.1 s; draft 3.4 s; polish 1.4 s: eleven changes (five
 * task nodes starting and ending, the execution turning `finish` on the next 1.5 s tick, service.md §3.3).
 * Repetition `r` moves every duration by the same seeded ±0.5 s for every contender (see
 * `timelineOf`): a fixed loop's latency depends on where a change falls in its 2 s or 1 s period, and
 * one frozen timeline would sample only eleven such phases.
 */
const CANVAS_ID = 'c-bench-single';

export const SINGLE_RUN_WORKFLOW: WorkflowDefinition = {
  canvasId: CANVAS_ID,
  title: 'Bench: one run with a parallel branch',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-research', parents: ['node-start'], durationMs: 4300, messages: [{ content: 'question framed', atMs: 1800 }, { content: 'research done' }] },
    { id: 'node-outline', parents: ['node-research'], durationMs: 2600, messages: [{ content: 'outline' }] },
    { id: 'node-sources', parents: ['node-research'], durationMs: 6100, messages: [{ content: 'sources found', atMs: 2500 }, { content: 'sources ranked' }] },
    { id: 'node-draft', parents: ['node-outline', 'node-sources'], durationMs: 3400, messages: [{ content: 'draft' }] },
    { id: 'node-polish', parents: ['node-draft'], durationMs: 1400, messages: [{ content: 'final text' }] },
  ],
};

export interface SingleRunOptions {
  /** How many times each contender runs the timeline (each time alone on its own account). */
  readonly repetitions: number;
  /** Emulator ms per real ms. */
  readonly speed: number;
}

export interface SingleRunRow {
  readonly contender: string;
  readonly runs: number;
  readonly completed: number;
  /** Mean requests per run: all of them, and per endpoint. */
  readonly requestsPerRun: { readonly total: number; readonly run: number; readonly status: number; readonly output: number; readonly other: number };
  readonly detection: Detection;
  /** This row against the fixed 2 s loop: requests per run, latency p50 and mean. */
  readonly versus2sLoop: { readonly requests: number | null; readonly p50: number | null; readonly mean: number | null };
}

export interface SingleRunResult {
  readonly scenario: 'single-run';
  readonly speed: number;
  readonly repetitions: number;
  readonly workflow: WorkflowDefinition;
  readonly rows: readonly SingleRunRow[];
}

const CONTENDERS: readonly Contender[] = [FLOWSTREAM_STREAM, FLOWSTREAM_FINAL, LOOP_2S, LOOP_1S];

const JITTER_MS = 500;

/** Real ms between the starts of two repetitions. */
const STAGGER_REAL_MS = 150;

/** The timeline of repetition `repetition`: the same for every contender. */
export const timelineOf = (repetition: number): WorkflowDefinition => variantOf(SINGLE_RUN_WORKFLOW, repetition + 1, () => JITTER_MS);

/** Each repetition alone: its own emulator and account, so no run shares a budget or a window. */
async function measure(contender: Contender, options: SingleRunOptions): Promise<Omit<SingleRunRow, 'versus2sLoop'>> {
  // Execution ids are unique across emulators, so one record of sightings serves every repetition.
  const sightings = new Sightings();
  const repetitions = await Promise.all(
    Array.from({ length: options.repetitions }, async (_, repetition) => {
      // Staggered: repetitions started in one burst would meet a busy event loop at their first polls.
      await new Promise((resolve) => setTimeout(resolve, repetition * STAGGER_REAL_MS));
      const world = await openWorld({ speed: options.speed, workflows: [timelineOf(repetition)] });
      try {
        const outcome = await contender.follow(world, { canvasIds: [CANVAS_ID], runs: 1, deadlineMs: 30 * 60_000, sightings });
        return { outcome, requests: world.requests(), executions: world.emulator.executions.list() };
      } finally {
        await world.close();
      }
    }),
  );
  const runs = options.repetitions;
  const perRun = (pick: (counts: RequestCounts) => number): number => repetitions.reduce((sum, repetition) => sum + pick(repetition.requests), 0) / runs;
  const run = perRun((counts) => counts.byEndpoint.run ?? 0);
  const status = perRun((counts) => counts.byEndpoint.status ?? 0);
  const output = perRun((counts) => counts.byEndpoint.output ?? 0);
  const total = perRun((counts) => counts.total);
  return {
    contender: contender.name,
    runs,
    completed: repetitions.reduce((sum, repetition) => sum + repetition.outcome.completed, 0),
    requestsPerRun: { total, run, status, output, other: total - run - status - output },
    detection: detection(
      repetitions.flatMap((repetition) => repetition.executions),
      sightings,
    ),
  };
}

/** Runs every contender in turn (the repetitions of one contender together) and compares each with the 2 s loop. */
export async function singleRun(options: SingleRunOptions): Promise<SingleRunResult> {
  // A first, discarded run warms up the code paths (module loading, JIT), which would otherwise slow the first contender's first polls.
  await measure(FLOWSTREAM_STREAM, { ...options, repetitions: 1 });
  const measured: Omit<SingleRunRow, 'versus2sLoop'>[] = [];
  for (const contender of CONTENDERS) measured.push(await measure(contender, options));
  const baseline = measured.find((row) => row.contender === LOOP_2S.name);
  const rows = measured.map((row) => ({
    ...row,
    versus2sLoop: {
      requests: ratio(row.requestsPerRun.total, baseline?.requestsPerRun.total ?? null),
      p50: ratio(row.detection.latencyMs.p50, baseline?.detection.latencyMs.p50 ?? null),
      mean: ratio(row.detection.latencyMs.mean, baseline?.detection.latencyMs.mean ?? null),
    },
  }));
  return { scenario: 'single-run', speed: options.speed, repetitions: options.repetitions, workflow: SINGLE_RUN_WORKFLOW, rows };
}

export const SINGLE_RUN_HEADERS = ['contender', 'runs', 'done', 'req/run', 'run', 'status', 'output', 'changes seen', 'p50 s', 'p95 s', 'mean s', 'req vs 2 s', 'p50 vs 2 s', 'mean vs 2 s'] as const;

export function singleRunTable(result: SingleRunResult): string {
  const one = (value: number): string => value.toFixed(1);
  return table(
    SINGLE_RUN_HEADERS,
    result.rows.map((row) => [
      row.contender,
      String(row.runs),
      String(row.completed),
      one(row.requestsPerRun.total),
      one(row.requestsPerRun.run),
      one(row.requestsPerRun.status),
      one(row.requestsPerRun.output),
      `${row.detection.seen}/${row.detection.changes}`,
      seconds(row.detection.latencyMs.p50),
      seconds(row.detection.latencyMs.p95),
      seconds(row.detection.latencyMs.mean),
      times(row.versus2sLoop.requests),
      times(row.versus2sLoop.p50),
      times(row.versus2sLoop.mean),
    ]),
  );
}
