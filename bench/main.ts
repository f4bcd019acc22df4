/**
 * `npm run bench`: issue 4's single-run comparison and issue 5's many-runs comparison, in one run on
 * the emulator (in-process `fetch`, the service's limits: 100 requests per minute, 10,000 per day) on
 * an accelerated clock. Every time printed is emulator time; tables go to stdout, results to
 * `bench/results/<scenario>.json`.
 */
import { manyRuns, manyRunsTable } from './many-runs.js';
import { writeResults } from './harness/report.js';
import { singleRun, singleRunTable } from './single-run.js';

const SINGLE_RUN = { repetitions: 12, speed: 10 };
const MANY_RUNS = { sizes: [1, 10, 50, 200], speed: 20 };

const began = performance.now();

const single = await singleRun(SINGLE_RUN);
console.log(`\nSingle run (issue 4): the scripted timeline ${SINGLE_RUN.repetitions}× per contender, each run alone on its account; emulator ${SINGLE_RUN.speed}× real time; latencies in emulator seconds\n`);
console.log(singleRunTable(single));
console.log(`→ ${await writeResults('single-run', single)}`);

const many = await manyRuns(MANY_RUNS);
console.log(`\nMany runs (issue 5): N runs at once on one account (100 requests/min); emulator ${MANY_RUNS.speed}× real time; latencies in emulator seconds\n`);
console.log(manyRunsTable(many));
console.log(`→ ${await writeResults('many-runs', many)}`);

console.log(`\nbench took ${((performance.now() - began) / 1000).toFixed(0)} s of real time`);
