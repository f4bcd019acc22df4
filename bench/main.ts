/**
 * `npm run bench`: the browser bundle's size, the single-run comparison, the many-runs comparison, the
 * 24-hour simulation and learned durations (both on a manual clock; the latter alone:
 * `npx tsx bench/learned-durations.ts`), large answers (`large-answers.ts`), the files of `src/` one run
 * or one call executes (`files-executed.ts`, each scenario in a process of its own), in one run on
 * the emulator (in-process `fetch`, the service's limits: 100 requests per minute, 10,000 per day) on
 * an accelerated clock, the fault soak (`fault-soak.ts`: 1,000 runs through random outages of the
 * service and Redis, alone: `npx tsx bench/fault-soak.ts`), the run relay under 1,000 viewers
 * (`relay.ts`, in a process of its own), then the client's own overhead with telemetry off and on
 * (`overhead.ts`, real time). Every time printed
 * by the first two is emulator time; tables go to stdout, results to `bench/results/<scenario>.json`.
 */
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { bundleSize, bundleSizeTable } from './bundle-size.js';
import { daySimulation, daySimulationTable, FLOWSTREAM_DAY, FLOWSTREAM_DAY_UNPACED, LOOP_2S_DAY } from './day-simulation.js';
import { faultSoakBench } from './fault-soak.js';
import { FLEET_TITLE, fleetMatrix, fleetMatrixTable } from './fleet.js';
import { FILES_EXECUTED_TITLE, filesExecutedReport, measureFilesExecuted } from './files-executed.js';
import { largeAnswers, largeAnswersTable } from './large-answers.js';
import { writeResults } from './harness/report.js';
import { learnedDurationsReport } from './learned-durations.js';
import { manyRuns, manyRunsTable, phaseSweep, phaseSweepTable } from './many-runs.js';
import { singleRun, singleRunTable } from './single-run.js';

/** Runs `file` of bench/ in a process of its own, the garbage collector exposed; it prints its own table and writes its results. */
function runBenchFile(file: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL(file, import.meta.url))], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`bench/${file} exited with ${String(code)}`));
    });
  });
}

const SINGLE_RUN = { repetitions: 12, speed: 5 };
const MANY_RUNS = { sizes: [1, 10, 50, 200], speed: 20 };
const PHASE_SWEEP = { runs: 50, planMs: [20_000, 40_000, 55_000, 70_000, 85_000], speed: 20 };

/**
 * Runs `scenario` while watching the event loop. The emulator's clock is real time accelerated, so a
 * stalled event loop (a busy machine) shows up as emulator seconds of latency: the p99 and max delay,
 * in real ms, say whether a run was disturbed.
 */
async function watched<T>(scenario: () => Promise<T>): Promise<T & { readonly eventLoopDelayRealMs: { readonly p99: number; readonly max: number } }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const result = await scenario();
  histogram.disable();
  return { ...result, eventLoopDelayRealMs: { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 } };
}

const delayNote = ({ p99, max }: { p99: number; max: number }, speed: number): string =>
  `event-loop delay: p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms of real time (× ${speed} in emulator time)`;

const began = performance.now();

const bundles = [await bundleSize(), await bundleSize(['es2015'])];
console.log('\nBrowser bundle: `import { createClient } from \'flowstream\'` bundled by esbuild for the browser, minified and gzipped (aim: under 40 KB gzipped)\n');
console.log(bundleSizeTable(bundles));
console.log(`→ ${await writeResults('bundle-size', bundles)}`);

const single = await watched(() => singleRun(SINGLE_RUN));
console.log(`\nSingle run: the scripted timeline ${SINGLE_RUN.repetitions}× per contender, each run alone on its account; emulator ${SINGLE_RUN.speed}× real time; latencies in emulator seconds\n`);
console.log(singleRunTable(single));
console.log(delayNote(single.eventLoopDelayRealMs, SINGLE_RUN.speed));
console.log(`→ ${await writeResults('single-run', single)}`);

const many = await watched(() => manyRuns(MANY_RUNS));
console.log(`\nMany runs: N runs at once on one account (100 requests/min); emulator up to ${MANY_RUNS.speed}× real time; latencies in emulator seconds\n`);
console.log(manyRunsTable(many));
console.log(delayNote(many.eventLoopDelayRealMs, MANY_RUNS.speed));
console.log(`→ ${await writeResults('many-runs', many)}`);

const sweep = await watched(async () => ({ ...PHASE_SWEEP, rows: await phaseSweep(PHASE_SWEEP) }));
const firstNodes = PHASE_SWEEP.planMs.map((ms) => ms / 1000).join(', ');
console.log(`\nThe round's phase: N = ${PHASE_SWEEP.runs} as above, the first node lasting ${firstNodes} s (40 s above); emulator ${PHASE_SWEEP.speed}× real time\n`);
console.log(phaseSweepTable(sweep.rows));
console.log(delayNote(sweep.eventLoopDelayRealMs, PHASE_SWEEP.speed));
console.log(`→ ${await writeResults('phase-sweep', sweep)}`);

const day = await daySimulation([FLOWSTREAM_DAY, FLOWSTREAM_DAY_UNPACED, LOOP_2S_DAY]);
console.log(`\nA whole day: one account with the service's limits (100/min, 10,000/day), the emulator and the client on one manual clock; latencies in emulator seconds; "minutes blind": some finished run unseen for over 10 minutes\n`);
console.log(daySimulationTable(day.rows));
console.log(`→ ${await writeResults('day-simulation', day)}`);

await learnedDurationsReport();

// In a process of its own with the garbage collector exposed, like the relay and the overhead below:
// the CPU of 20,000 queued requests is the library's, not the collection of other scenarios' garbage.
await runBenchFile('budget-scale.ts');

const large = await largeAnswers();
console.log('\nLarge answers: one output or status answer of many files or nodes, worked through at once (wall time = the event loop held), and a run handle on a workflow of many nodes\n');
console.log(largeAnswersTable(large));
console.log(`→ ${await writeResults('large-answers', large)}`);

const executed = await measureFilesExecuted();
console.log(`\n${FILES_EXECUTED_TITLE}\n`);
console.log(filesExecutedReport(executed));
console.log(`→ ${await writeResults('files-executed', executed)}`);

// The fleet matrix on the accelerated clock (its real-time half, about 35 minutes: `npx tsx bench/fleet.ts --clock real`).
const fleet = await fleetMatrix({ clocks: ['accelerated'], processes: [4, 8] });
console.log(`\n${FLEET_TITLE}\n`);
console.log(fleetMatrixTable(fleet.cells));
console.log(`→ ${await writeResults('fleet', fleet)}`);

// 1,000 runs through random outages of the service and of Redis, and the same without (about 7
// minutes); the client in a process of its own, with the garbage collector exposed.
await faultSoakBench();

// The run relay under 1,000 viewers (about a minute), in a process of its own with the garbage
// collector exposed: its heap per viewer is read after a full collection. It prints its own table.
await runBenchFile('relay.ts');

// In a process of its own, with the garbage collector exposed so that memory is read after a full
// collection, and no other scenario's emulators left in its heap or on its event loop.
console.log('\nClient overhead: 10,000 watched runs in one process, the budget off, the emulator in-process; then telemetry off and on in interleaved windows\n');
await runBenchFile('overhead.ts');

console.log(`\nbench took ${((performance.now() - began) / 1000).toFixed(0)} s of real time`);
