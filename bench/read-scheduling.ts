import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createDurationModel } from '../src/budget/duration-model.js';
import { createManualClock, driveClock } from '../src/emulator/index.js';
import { mulberry32 } from '../src/emulator/engine/seeded-random.js';
import type { OutputMode } from '../src/runs/poll.js';
import { FLOWSTREAM_FINAL, FLOWSTREAM_STREAM, followWithFlowstream, LOOP_2S } from './harness/contenders.js';
import { detection, detectionOf } from './harness/report.js';
import { Sightings } from './harness/sightings.js';
import { summarize } from './harness/stats.js';
import { openWorld } from './harness/world.js';
import { learnedWorkflow, TEN_REPETITIONS, WARM_UP_RUNS } from './learned-durations.js';
import { boundMs, MANY_RUNS_VARIANTS, RUNS_ALONE } from './many-runs.js';

/**
 * How the budget times the runs' reads, in figures on one manual clock, in seconds of real time instead of the minutes of
 * `npm run bench`, the client's jitter seeded: the same numbers on any machine.
 *
 * - `many N stream|final`: many-runs.ts's N runs at once (default client, its model on): detection
 *   latency p50 ÷ bound, p95, mean, the run's end (the execution seen settled − its last node's end) and
 *   its `finished` (the answer to its last read − its last node's end: in `final` mode the output read
 *   after the end, which the result waits on).
 * - `run-end N stream|final`: the same with no model (run-end.ts's setting).
 * - `learned N cv`: learned-durations.ts's warm rows with the minute's budget, flowstream with its model:
 *   `TEN_REPETITIONS` batches of N after `WARM_UP_RUNS` runs and a day's rest.
 * - `alone`: many-runs.ts's N = 1 cell, `RUNS_ALONE` runs one after another, each alone on the account
 *   and by a client of its own, for flowstream (stream, final) and the 2 s loop: p50 ÷ bound and mean.
 *
 * `npx tsx bench/read-scheduling.ts many 200 stream [log.json]`: the optional file gets every request
 * (emulator time from the first start, endpoint, execution) and every change (its time from the first
 * start, its latency), per run — `bench/read-log.ts` reads it;
 * `learned 10 0.3 [log.json]` the same per measured batch, times from the batch's first start.
 */

const DEADLINE_MS = 30 * 60_000;

async function manyRuns(runs: number, output: OutputMode, durations: boolean, log: string | undefined): Promise<void> {
  const clock = createManualClock();
  const world = await openWorld({ speed: 0, clock, workflows: MANY_RUNS_VARIANTS });
  const random = Math.random;
  Math.random = mulberry32(runs);
  try {
    const sightings = new Sightings();
    const startedAt = clock.now();
    let done = false;
    const client = durations ? world.flowstream() : world.flowstream({}, { durations: false });
    const following = followWithFlowstream(world, { canvasIds: MANY_RUNS_VARIANTS.map((workflow) => workflow.canvasId!), runs, deadlineMs: DEADLINE_MS, sightings }, output, client).finally(() => {
      done = true;
    });
    await driveClock(clock, { until: () => done });
    const { completed } = await following;
    const executions = world.emulator.executions.list();
    const seen = detectionOf(executions.flatMap((execution) => sightings.changes(execution)));
    const ends = summarize(
      executions.flatMap((execution) => {
        const settle = sightings.changes(execution).find((change) => change.key === 'settle');
        if (settle?.latencyMs === undefined) return [];
        return [settle.at + settle.latencyMs - Math.max(...execution.nodes.map((node) => node.endedAt ?? 0))];
      }),
    );
    // The run's `finished` event comes with the answer to its last read (the output read after the
    // end in `final` mode): on the manual clock the answer is at the request's own emulator time.
    const lastReadAt = new Map<string, number>();
    for (const request of world.emulator.requests.list()) if (request.executionId !== undefined) lastReadAt.set(request.executionId, request.emulatorTime);
    const finished = summarize(
      executions.flatMap((execution) => {
        const at = lastReadAt.get(execution.executionId);
        return at === undefined || execution.settledAt === undefined ? [] : [at - Math.max(...execution.nodes.map((node) => node.endedAt ?? 0))];
      }),
    );
    const requests = world.requests();
    const s = (ms: number | null): number | null => (ms === null ? null : Math.round(ms / 100) / 10);
    const times = (ms: number | null): number | null => (ms === null ? null : Math.round((ms / boundMs(runs)) * 100) / 100);
    console.log(JSON.stringify({ runs, output, model: durations, completed, requests: requests.byEndpoint, p50VsBound: times(seen.latencyMs.p50), p95: s(seen.latencyMs.p95), mean: s(seen.latencyMs.mean), runEnd: { p50VsBound: times(ends.p50), p50: s(ends.p50), p95: s(ends.p95) }, finished: { p50VsBound: times(finished.p50), p50: s(finished.p50), p95: s(finished.p95) } }));
    if (log !== undefined) {
      const list = world.emulator.requests.list().map((request) => ({ t: request.emulatorTime - startedAt, endpoint: request.endpoint, executionId: request.executionId }));
      const changes = executions.map((execution) => ({ executionId: execution.executionId, changes: sightings.changes(execution).map((change) => ({ ...change, at: change.at - startedAt })) }));
      writeFileSync(log, JSON.stringify({ requests: list, changes }));
    }
  } finally {
    Math.random = random;
    await world.close();
  }
}

async function learned(runs: number, cv: number, log: string | undefined): Promise<void> {
  const changes: ReturnType<Sightings['changes']> = [];
  const logged: unknown[] = [];
  let requests = 0;
  for (let batch = 0; batch < TEN_REPETITIONS; batch += 1) {
    const random = Math.random;
    Math.random = mulberry32(runs * 1_000 + batch + Math.round(cv * 10));
    const canvasId = `c-bench-learned-${String(batch)}`;
    const clock = createManualClock();
    const world = await openWorld({ speed: 0, clock, workflows: [learnedWorkflow(cv, canvasId)] });
    try {
      const client = world.flowstream({ dayBurst: 0.999 }, { durations: createDurationModel() });
      const driven = async (work: Promise<unknown>): Promise<void> => {
        let done = false;
        const settled = work.finally(() => {
          done = true;
        });
        await driveClock(clock, { until: () => done });
        await settled;
      };
      await driven(followWithFlowstream(world, { canvasIds: [canvasId], runs: WARM_UP_RUNS, deadlineMs: DEADLINE_MS, sightings: new Sightings() }, 'final', client));
      await driveClock(clock, { toTime: clock.now() + 24 * 60 * 60_000 });
      const lastBefore = world.emulator.requests.list().at(-1)?.sequence ?? 0;
      const measuredFrom = clock.now();
      const sightings = new Sightings();
      await driven(followWithFlowstream(world, { canvasIds: [canvasId], runs, deadlineMs: DEADLINE_MS, sightings, firstItem: WARM_UP_RUNS }, 'final', client));
      changes.push(...world.emulator.executions.list().filter((execution) => execution.createdAt >= measuredFrom).flatMap((execution) => sightings.changes(execution)));
      const measured = world.emulator.requests.list({ after: lastBefore });
      requests += measured.length;
      if (log !== undefined) {
        const executions = world.emulator.executions.list().filter((execution) => execution.createdAt >= measuredFrom);
        logged.push({
          batch,
          requests: measured.map((request) => ({ t: request.emulatorTime - measuredFrom, endpoint: request.endpoint, executionId: request.executionId })),
          changes: executions.map((execution) => ({ executionId: execution.executionId, changes: sightings.changes(execution).map((change) => ({ ...change, at: change.at - measuredFrom })) })),
        });
      }
    } finally {
      Math.random = random;
      await world.close();
    }
  }
  const seen = detectionOf(changes);
  const p50 = seen.latencyMs.p50;
  if (log !== undefined) writeFileSync(log, JSON.stringify(logged));
  console.log(JSON.stringify({ runs, batches: TEN_REPETITIONS, cv, requests, seen: `${String(seen.seen)}/${String(seen.changes)}`, p50VsBound: p50 === null ? null : Math.round((p50 / boundMs(runs)) * 100) / 100 }));
}

async function alone(): Promise<void> {
  const canvasIds = MANY_RUNS_VARIANTS.map((workflow) => workflow.canvasId!);
  for (const contender of [FLOWSTREAM_STREAM, FLOWSTREAM_FINAL, LOOP_2S]) {
    const random = Math.random;
    Math.random = mulberry32(RUNS_ALONE);
    const clock = createManualClock();
    const world = await openWorld({ speed: 0, clock, workflows: MANY_RUNS_VARIANTS });
    try {
      const sightings = new Sightings();
      let completed = 0;
      for (let round = 0; round < RUNS_ALONE; round += 1) {
        // As many-runs.ts's cell: round r's run follows the variant it would have among the cell's runs at once.
        const rotated = canvasIds.map((_, index) => canvasIds[(round + index) % canvasIds.length]!);
        let done = false;
        const following = contender.follow(world, { canvasIds: rotated, runs: 1, deadlineMs: DEADLINE_MS, sightings, firstItem: round }).finally(() => {
          done = true;
        });
        await driveClock(clock, { until: () => done });
        completed += (await following).completed;
      }
      const seen = detection(world.emulator.executions.list(), sightings);
      const ms = (value: number | null): number | null => (value === null ? null : Math.round(value));
      const p50 = seen.latencyMs.p50;
      console.log(JSON.stringify({ contender: contender.name, completed, requests: world.requests().byEndpoint, seen: `${String(seen.seen)}/${String(seen.changes)}`, p50VsBound: p50 === null ? null : Math.round((p50 / boundMs(1)) * 100) / 100, p50: ms(p50), mean: ms(seen.latencyMs.mean) }));
    } finally {
      Math.random = random;
      await world.close();
    }
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const [scenario = 'many', size = '200', third = 'stream', log] = process.argv.slice(2);
  const runs = Number(size);
  if (scenario === 'learned') await learned(runs, Number(third), log);
  else if (scenario === 'alone') await alone();
  else if (scenario === 'many' || scenario === 'run-end') await manyRuns(runs, third === 'final' ? 'final' : 'stream', scenario === 'many', log);
  else throw new Error(`unknown scenario ${scenario}: many | run-end | learned | alone`);
}
