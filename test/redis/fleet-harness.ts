import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { budgetLimits } from '../../src/budget/account-rules.js';
import { clockScheduler, createEmulator, createScaledClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { scrubbedEnv, startProcess, type RunningProcess } from '../cli/support/child-process.js';
import { busiestWindow, fleetFigures, longestQuiet, readsWhileStarting, type FleetFigures, type LoggedRequest, type Span } from './fleet-figures.js';
import { type BundledScripts, bundleScripts } from '../support/bundled-scripts.js';
import type { FleetWorkerConfig } from './fleet-worker.js';

/**
 * A fleet of processes on one account, as a parametrised scenario: each process a child process with
 * its own client, all sharing the account's budget in a real redis-server, against the emulator with
 * the service's limits (service.md §2.1) on 127.0.0.1, on an accelerated clock that every process reads
 * alike or in real time. A process can join late and one can be killed with SIGKILL mid-run. The
 * fleet test runs it at small counts, `bench/fleet.ts` at full size. Every process is spawned first
 * and joins the account when told: the fleet together once all have loaded, the late one when its time
 * comes (loading a process takes seconds of a busy machine, minutes of an accelerated clock).
 */
export interface FleetScenario {
  /** Runs started at once by each process of the fleet, one entry per process. */
  readonly processes: readonly number[];
  /** One more process, with `runs` runs, spawned `afterMs` (emulator ms) after every run of the fleet has started. */
  readonly joinLate?: { readonly runs: number; readonly afterMs: number };
  /** Process `process` (an index into `processes`) is killed -9 `afterMs` (emulator ms) after all its runs started. */
  readonly kill?: { readonly process: number; readonly afterMs: number };
  /** Emulator ms per real ms, every process on the emulator's clock; absent: real time, each client on its own default scheduler. */
  readonly speed?: number;
  /** How long each run's one task node works, emulator ms: the fleet's steady state lies within it. */
  readonly workMs: number;
  /**
   * The runs' output mode. Default `'final'`: a run's reads are then its status reads, which the
   * figures count (with `'stream'`, output reads of a working node come besides).
   */
  readonly output?: 'stream' | 'final';
  /**
   * The account's requests per day, for the emulator and the budget alike. Default the service's 10,000
   * (service.md §2.1), whose burst of about 950 requests a large fleet outlasts: the budget then paces the
   * day, 7 a minute. A larger day keeps the day's pacing out of the minute's share being measured.
   */
  readonly perDay?: number;
  /**
   * The account's requests per minute, for the emulator and the budget alike. Default the service's 100.
   * In real time a larger minute fills a short test: runs are read every 2 s at the fastest (the
   * service's own loop, service.md §6), so the account is used whole only with enough runs waiting.
   */
  readonly perMinute?: number;
}

export interface FleetOutcome {
  readonly figures: FleetFigures;
  /** The span the fairness and utilisation figures cover, emulator ms from the fleet's first request. */
  readonly steadyMs: Span;
  /** From the first start to the last, emulator ms: the fleet's start phase. */
  readonly startPhaseMs: number;
  /**
   * Reads (status and output) of one process's runs sent while another process was starting its runs
   * (from its first start to its last, the late process's and the killed one's included): starts come
   * before reads account-wide, so none should have been but for the few already on their way.
   */
  readonly readsWhileStarting: number;
  /** Exit codes of the processes not killed, the late one last. */
  readonly exitCodes: readonly (number | null)[];
  readonly runs: number;
  readonly starts: number;
  /** Runs that failed (a worker prints `failed <n>`): none expected. */
  readonly failedRuns: number;
  /** The most requests the service received in any minute of its time. */
  readonly busiestMinute: number;
  /** The longest time in the steady span with no request, emulator ms, `from` counted from the fleet's first request. */
  readonly longestQuietMs: { readonly from: number; readonly ms: number };
  /** Requests for the killed process's executions that arrived more than a second after the kill. */
  readonly readsOfKilledAfterKill: number | undefined;
  /**
   * From the kill to the start of the steady span, emulator ms: until the killed process's share of
   * the reads has gone to the others — it lends it once it has missed two of its turns (measured from
   * the log before the kill), so four of them and a pacer's burst.
   */
  readonly takeoverMs: number | undefined;
  /** Real ms the scenario took, spawning included. */
  readonly realMs: number;
  /**
   * Per process not killed (the late one last), how late its event loop ran while its runs went on,
   * real ms: the 99th percentile and the most. A loaded machine shows here first.
   */
  readonly loopDelayMs: readonly { readonly p99: number; readonly max: number }[];
  /** The same of this process, the emulator's (it stamps each request's arrival), while the fleet ran. */
  readonly emulatorLoopDelayMs: { readonly p99: number; readonly max: number };
}

/** The account's rate the emulator enforces by default (service.md §2.1). */
export const PER_MINUTE = 100;
/** How many of a killed process's turns the steady span waits for its share to be lent: it lends after missing two. */
const TAKEOVER_TURNS = 4;
const WORKER = fileURLToPath(new URL('fleet-worker.ts', import.meta.url));
const CANVAS = 'c-fleet';

const workflowOf = (workMs: number): WorkflowDefinition => ({
  canvasId: CANVAS,
  title: 'A long task',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-work', parents: ['node-start'], durationMs: workMs, messages: [{ content: 'done' }] },
  ],
});

/** The execution ids a worker printed as it started its runs. */
const startedBy = (worker: RunningProcess): string[] => [...worker.stdout().matchAll(/^started (\S+)$/gmu)].map((match) => match[1]!);

let accounts = 0;

/** fleet-worker.ts bundled once: `node <path> <config>` runs a process of a fleet (see `runFleet`). */
export async function bundleFleetWorker(): Promise<BundledScripts<'worker'>> {
  return bundleScripts({ worker: 'test/redis/fleet-worker.ts' });
}

/** Node's arguments before a worker's config: the bundled script, or the source through tsx. */
export const workerCommand = (workerScript: string | undefined): string[] => (workerScript === undefined ? ['--import', 'tsx', WORKER] : [workerScript]);

/**
 * Runs `scenario` on the redis-server at `socket` with an emulator of its own (a fresh account: its
 * minute and day windows start empty) and resolves once every process not killed has exited. The
 * steady span runs from one turn of every run after the last start (and, when a process was killed,
 * the takeover of its share) to the first end of a run that is still measured. `workerScript`: fleet-worker.ts
 * bundled (`bundleFleetWorker`), which each process loads faster; absent, each compiles it with tsx.
 */
export async function runFleet(scenario: FleetScenario, socket: string, workerScript?: string): Promise<FleetOutcome> {
  const began = performance.now();
  const perMinute = scenario.perMinute ?? PER_MINUTE;
  const clock = createScaledClock(scenario.speed ?? 1);
  const limited = scenario.perDay !== undefined || scenario.perMinute !== undefined;
  const emulator = await createEmulator({ clock, samples: false, workflows: [workflowOf(scenario.workMs)], ...(limited ? { rateLimit: { perMinute, perDay: scenario.perDay ?? 10_000 } } : {}) });
  const scheduler = clockScheduler(clock);
  const account = `fleet-${process.pid}-${(accounts += 1)}`;
  const spawned: RunningProcess[] = [];
  const spawnWorker = (name: string, runs: number): RunningProcess => {
    const config: FleetWorkerConfig = {
      socket,
      account,
      baseUrl: emulator.url,
      apiKey: emulator.apiKey,
      realStart: clock.realStart,
      canvasId: CANVAS,
      runs,
      name,
      output: scenario.output ?? 'final',
      waitForGo: true,
      ...(scenario.perMinute === undefined ? {} : { perMinute: scenario.perMinute }),
      ...(scenario.perDay === undefined ? {} : { perDay: scenario.perDay }),
      ...(scenario.speed === undefined ? {} : { speed: scenario.speed }),
    };
    const worker = startProcess(process.execPath, [...workerCommand(workerScript), JSON.stringify(config)], { env: scrubbedEnv(), cwd: process.cwd(), stdin: 'pipe' });
    spawned.push(worker);
    return worker;
  };
  const go = (worker: RunningProcess): void => {
    worker.child.stdin?.write('go\n');
  };
  const afterEmulatorMs = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      scheduler.schedule(resolve, ms);
    });
  // Real ms a worker may take: its runs' work, the late start and the starts, with room for a loaded machine.
  const emulatorLoop = monitorEventLoopDelay({ resolution: 10 });
  const exitWithinMs = ((scenario.workMs + (scenario.joinLate?.afterMs ?? 0) + 10 * 60_000) / (scenario.speed ?? 1)) * 2 + 60_000;
  try {
    const workers = scenario.processes.map((runs, index) => spawnWorker(`p${index}`, runs));
    const { joinLate, kill } = scenario;
    const lateWorker = joinLate === undefined ? undefined : spawnWorker('late', joinLate.runs);
    await Promise.all(spawned.map((worker) => worker.waitFor(/^ready$/mu, 120_000)));
    emulatorLoop.enable();
    workers.forEach(go);
    // Every run of the process started (or failed, which the figures count). Each repetition takes one
    // such line and the other lines after it, never another such line: no backtracking blows up.
    const allStarted = (index: number): Promise<unknown> =>
      workers[index]!.waitFor(new RegExp(`(?:(?:started|failed) [^\\n]*\\n(?:(?!started |failed )[^\\n]*\\n)*){${scenario.processes[index]!}}`, 'u'), exitWithinMs);
    const late =
      joinLate === undefined || lateWorker === undefined
        ? undefined
        : Promise.all(workers.map((_, index) => allStarted(index)))
            .then(() => afterEmulatorMs(joinLate.afterMs))
            .then(() => {
              go(lateWorker);
            });
    // Awaited below; until then a failure of the kill must not leave its rejection unhandled.
    late?.catch(() => undefined);
    let killedAt: number | undefined;
    const victim = kill === undefined ? undefined : workers[kill.process];
    if (kill !== undefined && victim !== undefined) {
      await allStarted(kill.process);
      await afterEmulatorMs(kill.afterMs);
      victim.child.kill('SIGKILL');
      killedAt = clock.now();
    }
    await late;
    const survivors = [...workers.filter((worker) => worker !== victim), ...(lateWorker === undefined ? [] : [lateWorker])];
    const exitCodes = await Promise.all(survivors.map((worker) => worker.exited(exitWithinMs)));
    if (victim !== undefined) await victim.exited(exitWithinMs);
    emulatorLoop.disable();

    // Each process's warm-up request, answered 401, is not the account's (see fleet-worker.ts).
    const requests: LoggedRequest[] = emulator.requests.list().filter((request) => request.status !== 401);
    const starts = requests.filter((request) => request.endpoint === 'run');
    const measured = survivors.map(startedBy);
    const measuredIds = new Set(measured.flat());
    const fleetStart = Math.min(...requests.map((request) => request.emulatorTime));
    const firstStart = Math.min(...starts.map((request) => request.emulatorTime));
    const lastStart = Math.max(...starts.map((request) => request.emulatorTime));
    const firstEnd = Math.min(...emulator.executions.list().filter((execution) => measuredIds.has(execution.executionId)).map((execution) => execution.settledAt ?? Infinity));
    const killedRuns = new Set(victim === undefined ? [] : startedBy(victim));
    const takeoverMs = killedAt === undefined || kill === undefined ? undefined : takeoverOf(scenario, kill.process, perMinute);
    const steady: Span = { from: Math.max(lastStart + settleOf(scenario, perMinute), killedAt === undefined || takeoverMs === undefined ? -Infinity : killedAt + takeoverMs), to: firstEnd };
    const quietest = longestQuiet(requests.map((request) => request.emulatorTime), steady);
    const quiet = { from: quietest.from - fleetStart, ms: quietest.ms };
    return {
      figures: fleetFigures(requests, measured, steady, perMinute),
      steadyMs: { from: steady.from - fleetStart, to: steady.to - fleetStart },
      exitCodes,
      runs: scenario.processes.reduce((sum, runs) => sum + runs, 0) + (scenario.joinLate?.runs ?? 0),
      starts: starts.length,
      failedRuns: spawned.reduce((sum, worker) => sum + [...worker.stdout().matchAll(/^failed \d+$/gmu)].length, 0),
      startPhaseMs: lastStart - firstStart,
      readsWhileStarting: readsWhileStarting(requests, spawned.map(startedBy)),
      busiestMinute: busiestWindow(requests.map((request) => request.emulatorTime)),
      longestQuietMs: quiet,
      readsOfKilledAfterKill: killedAt === undefined ? undefined : requests.filter((request) => killedRuns.has(request.executionId ?? '') && request.emulatorTime > killedAt + 1_000).length,
      takeoverMs,
      realMs: performance.now() - began,
      loopDelayMs: survivors.map(loopDelayOf),
      emulatorLoopDelayMs: { p99: Math.round(emulatorLoop.percentile(99) / 1e6), max: Math.round(emulatorLoop.max / 1e6) },
    };
  } finally {
    emulatorLoop.disable();
    // A scenario that failed midway leaves no process behind.
    for (const worker of spawned) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await emulator.close();
  }
}

/** What a worker printed of its event loop's delay (see fleet-worker.ts); NaN if it printed nothing. */
function loopDelayOf(worker: RunningProcess): { readonly p99: number; readonly max: number } {
  const match = /^loop \d+ (\d+) (\d+)$/mu.exec(worker.stdout());
  return { p99: Number(match?.[1] ?? Number.NaN), max: Number(match?.[2] ?? Number.NaN) };
}

/**
 * How long after the last start the fleet is settled: one turn of every run at the account's pace (a
 * run reads fast at first, service.md §3.2's ticks, and only then at its share).
 */
function settleOf(scenario: FleetScenario, perMinute: number): number {
  const runs = scenario.processes.reduce((sum, count) => sum + count, 0) + (scenario.joinLate?.runs ?? 0);
  return budgetLimits({ requestsPerMinute: perMinute }).pacingIntervalMs * runs;
}

/**
 * How long after the kill the killed process's share has surely gone to the others: `TAKEOVER_TURNS`
 * of its turns (the account's pacing interval times the fleet's runs over its own, the late process's
 * counted: a turn at its longest) and a burst of the account's pacer.
 */
function takeoverOf(scenario: FleetScenario, killed: number, perMinute: number): number {
  const limits = budgetLimits({ requestsPerMinute: perMinute });
  const runs = scenario.processes.reduce((sum, count) => sum + count, 0) + (scenario.joinLate?.runs ?? 0);
  const turnMs = (limits.pacingIntervalMs * runs) / Math.max(1, scenario.processes[killed] ?? 1);
  return TAKEOVER_TURNS * turnMs + limits.burst * limits.pacingIntervalMs;
}
