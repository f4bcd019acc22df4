/**
 * Files executed: how many files of `src/` one run executes, and how many one plain call does, read
 * from V8's precise coverage with the set-up left out. Alone:
 *
 *     npx tsx bench/files-executed.ts
 *
 * Each scenario runs in a Node process of its own (`node --import tsx`, so the files measured are the
 * `src/*.ts` files themselves, one module each), with nothing of another scenario loaded or warmed:
 * the emulator (in-process `fetch`, a manual clock) and the client are created, precise coverage
 * (`callCount`, `detailed`) is started and its counters reset, then the measured window: one
 * `client.run(...)` subscribed to its end, or one plain call awaited. A file counts when any of its
 * functions other than its module's top level ran in the window; `src/emulator/**` (the server) never
 * counts. The same is measured for ky alone (one `ky.get(...).json()` with one retry, files of
 * `node_modules/ky`) for comparison. Prints the counts and lists, writes
 * `bench/results/files-executed.json`. A few seconds.
 *
 * The aim, for a later refactor: at most 25 files for a run, at most 12 for a plain call.
 */
import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ky from 'ky';
import { lastValueFrom } from 'rxjs';
import { createClient } from '../src/client.js';
import { createEmulator, createManualClock, driveClock } from '../src/emulator/index.js';
import { table, writeResults } from './harness/report.js';

/** What each scenario measures, in the order printed. */
export const SCENARIOS = {
  run: "client.run('c-sample-linear') subscribed to its end (3 chained nodes, output streamed, the default options)",
  'workflows.get': "client.workflows.get('c-sample-linear')",
  'workflows.get, second call': "client.workflows.get('c-sample-linear') again, the client's first call made in the set-up",
  'workflows.get, budget off': "client.workflows.get('c-sample-linear') from a client created with `budget: false`",
  'executions.status': 'client.executions.status(id) of an execution started in the set-up',
  'workflows.get, one retry': "client.workflows.get('c-sample-linear'), its first answer a 503",
  'ky, one retry': 'ky.get(url, { retry: { limit: 1 } }).json() against the emulator, its first answer a 503',
} as const;

export type ScenarioName = keyof typeof SCENARIOS;

/** The aims for a later refactor. */
export const AIMS = { run: 25, plainCall: 12 } as const;

export interface ExecutedFile {
  /** Relative to the repository (`src/…`) or to `node_modules/ky/`. */
  readonly file: string;
  /** The functions of the file that ran in the window, by name (`(anonymous)` when it has none). */
  readonly functions: readonly string[];
}

/** The files of one package or tree that ran in a window. */
export interface FilesCount {
  readonly files: number;
  /** Files per directory (`src/http`, `src/runs`, …). */
  readonly byDirectory: Readonly<Record<string, number>>;
  readonly executed: readonly ExecutedFile[];
}

export interface ScenarioResult {
  readonly scenario: ScenarioName;
  readonly description: string;
  /** flowstream's own files: `src/`, the emulator excluded. */
  readonly src: FilesCount;
  /** ky's files (`node_modules/ky/`), which flowstream's transport calls too. */
  readonly ky: FilesCount;
}

export interface FilesExecutedResults {
  readonly node: string;
  readonly aims: typeof AIMS;
  readonly scenarios: readonly ScenarioResult[];
}

// --- coverage -------------------------------------------------------------------------------------

interface CoverageRange {
  readonly startOffset: number;
  readonly endOffset: number;
  readonly count: number;
}
interface FunctionCoverage {
  readonly functionName: string;
  readonly ranges: readonly CoverageRange[];
}
interface ScriptCoverage {
  readonly url: string;
  readonly functions: readonly FunctionCoverage[];
}

const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));
const SRC = pathToFileURL(fileURLToPath(new URL('../src/', import.meta.url))).href;
const EMULATOR = `${SRC}emulator/`;
const KY_PACKAGE = '/node_modules/ky/';

/** Which counted file a script's URL is, relative to what it belongs to, or undefined when it is not counted. */
function countedFile(url: string, counted: 'src' | 'ky'): string | undefined {
  const bare = url.replace(/[?#].*$/, '');
  if (counted === 'src') return bare.startsWith(SRC) && !bare.startsWith(EMULATOR) ? `src/${bare.slice(SRC.length)}` : undefined;
  const at = bare.lastIndexOf(KY_PACKAGE);
  return bare.startsWith('file:') && at !== -1 ? bare.slice(at + KY_PACKAGE.length) : undefined;
}

/**
 * The files whose functions ran, from one take of precise coverage (counters reset at the previous
 * take). A script's first function is its top level (the whole source, offset 0): it never counts.
 */
export function executedFiles(scripts: readonly ScriptCoverage[], counted: 'src' | 'ky'): ExecutedFile[] {
  const files = new Map<string, Set<string>>();
  for (const script of scripts) {
    const file = countedFile(script.url, counted);
    if (file === undefined) continue;
    for (const [index, fn] of script.functions.entries()) {
      const whole = fn.ranges[0];
      if (whole === undefined || whole.count === 0) continue;
      if (index === 0 && whole.startOffset === 0 && fn.functionName === '') continue;
      // tsx's `keepNames` helper, a copy in every file, called only where code of the file runs anyway.
      if (fn.functionName === '__name') continue;
      const names = files.get(file) ?? new Set<string>();
      names.add(fn.functionName === '' ? '(anonymous)' : fn.functionName);
      files.set(file, names);
    }
  }
  return [...files].map(([file, names]) => ({ file, functions: [...names].sort() })).sort((a, b) => a.file.localeCompare(b.file));
}

/** Runs `window` with precise coverage on, every counter reset at its start; what ran in it. */
async function covered(window: () => Promise<void>): Promise<ScriptCoverage[]> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
    await session.post('Profiler.takePreciseCoverage'); // the set-up's counts, discarded: the take resets them
    await window();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    return result;
  } finally {
    session.disconnect();
  }
}

function filesCount(scripts: readonly ScriptCoverage[], counted: 'src' | 'ky'): FilesCount {
  const executed = executedFiles(scripts, counted);
  const byDirectory: Record<string, number> = {};
  for (const { file } of executed) {
    const directory = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.';
    byDirectory[directory] = (byDirectory[directory] ?? 0) + 1;
  }
  return { files: executed.length, byDirectory, executed };
}

// --- one scenario, in this process --------------------------------------------------------------------

const CANVAS = 'c-sample-linear';

async function measureHere(scenario: ScenarioName): Promise<ScenarioResult> {
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false });
  try {
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler });
    const drive = async (work: Promise<unknown>): Promise<void> => {
      let settled = false;
      const done = work.finally(() => {
        settled = true;
      });
      await driveClock(clock, { until: () => settled });
      await done;
    };
    let window: () => Promise<void>;
    switch (scenario) {
      case 'run':
        window = () => drive(lastValueFrom(client.run(CANVAS)));
        break;
      case 'workflows.get':
        window = () => drive(client.workflows.get(CANVAS));
        break;
      case 'workflows.get, second call':
        await drive(client.workflows.get(CANVAS));
        window = () => drive(client.workflows.get(CANVAS));
        break;
      case 'workflows.get, budget off': {
        const unbudgeted = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false });
        window = () => drive(unbudgeted.workflows.get(CANVAS));
        break;
      }
      case 'executions.status': {
        // Started by a bare request, so that no client code runs for it.
        const answer = await emulator.fetch(`${emulator.url}/openapi/workflow/${CANVAS}/run`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${emulator.apiKey}`, 'Content-Type': 'application/json' },
          body: '{}',
        });
        const { data } = (await answer.json()) as { data: { executionId: string } };
        window = () => drive(client.executions.status(data.executionId));
        break;
      }
      case 'workflows.get, one retry':
        emulator.faults.add({ kind: 'status', status: 503, endpoint: 'detail', times: 1 });
        window = () => drive(client.workflows.get(CANVAS));
        break;
      case 'ky, one retry': {
        emulator.faults.add({ kind: 'status', status: 503, endpoint: 'detail', times: 1 });
        const url = `${emulator.url}/openapi/workflows/${CANVAS}`;
        // ky waits on real timers (0.3 s before its retry): the manual clock plays no part.
        window = async () => {
          await ky.get(url, { fetch: emulator.fetch, headers: { Authorization: `Bearer ${emulator.apiKey}` }, retry: { limit: 1 } }).json();
        };
        break;
      }
    }
    const scripts = await covered(window);
    const retried = emulator.requests.list({ endpoint: 'detail' }).length;
    if (scenario.endsWith('one retry') && retried !== 2) throw new Error(`${scenario}: expected 2 detail requests, saw ${retried}`);
    return { scenario, description: SCENARIOS[scenario], src: filesCount(scripts, 'src'), ky: filesCount(scripts, 'ky') };
  } finally {
    await emulator.close();
  }
}

// --- every scenario, each in a child process ---------------------------------------------------------

const THIS_FILE = fileURLToPath(import.meta.url);

function measureInChild(scenario: ScenarioName): Promise<ScenarioResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', THIS_FILE, '--scenario', scenario], { cwd: REPOSITORY, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`bench/files-executed.ts --scenario '${scenario}' exited with ${String(code)}`));
      else resolve(JSON.parse(out) as ScenarioResult);
    });
  });
}

/**
 * Measures every scenario, each in a fresh process; prints nothing.
 *
 * @example
 * ```ts
 * const { scenarios } = await measureFilesExecuted();
 * ```
 */
export async function measureFilesExecuted(scenarios: readonly ScenarioName[] = Object.keys(SCENARIOS) as ScenarioName[]): Promise<FilesExecutedResults> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) results.push(await measureInChild(scenario));
  return { node: process.version, aims: AIMS, scenarios: results };
}

const aimOf = (scenario: ScenarioName): number | undefined => (scenario === 'ky, one retry' ? undefined : scenario === 'run' ? AIMS.run : AIMS.plainCall);

export const FILES_EXECUTED_TITLE = `Files executed: files of src/ (the emulator excluded) and of ky whose functions ran in one run or one call, set-up excluded; V8 precise coverage, each in a fresh process (aim: ≤ ${AIMS.run} for a run, ≤ ${AIMS.plainCall} for a call)`;

/** The counts as a table, then each scenario's files. */
export function filesExecutedReport(results: FilesExecutedResults): string {
  const rows = results.scenarios.map(({ scenario, src, ky }) => {
    const aim = aimOf(scenario);
    return [scenario, String(src.files), aim === undefined ? '—' : `≤ ${aim}`, String(ky.files)];
  });
  const directories = (count: FilesCount): string =>
    Object.entries(count.byDirectory)
      .map(([directory, files]) => `${directory} ${files}`)
      .join(', ');
  const lists = results.scenarios.map(({ scenario, description, src, ky }) =>
    [
      `${scenario}: ${description}`,
      `  src: ${src.files} files${src.files === 0 ? '' : ` (${directories(src)})`}`,
      ...src.executed.map(({ file }) => `    ${file}`),
      `  ky: ${ky.files} files: ${ky.executed.map(({ file }) => file.replace(/^distribution\//, '')).join(', ')}`,
    ].join('\n'),
  );
  return [table(['window', 'src files', 'aim', 'ky files'], rows), ...lists].join('\n\n');
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const at = process.argv.indexOf('--scenario');
  if (at !== -1) {
    const scenario = process.argv[at + 1] as ScenarioName;
    if (!(scenario in SCENARIOS)) throw new RangeError(`--scenario: one of ${Object.keys(SCENARIOS).join(', ')}`);
    process.stdout.write(JSON.stringify(await measureHere(scenario)));
  } else {
    console.log(`\n${FILES_EXECUTED_TITLE}\n`);
    const results = await measureFilesExecuted();
    console.log(filesExecutedReport(results));
    console.log(`→ ${await writeResults('files-executed', results)}`);
  }
}
