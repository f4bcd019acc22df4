/**
 * The fault soak's client: a process of its own, as a user's service would be, so that its heap, its
 * event loop and its exit say what the client leaves behind. A client on a Redis budget, on the
 * emulator's clock (same speed and real start as the soak's emulator), follows the soak's runs
 * (run-plan.ts, from the seed) and leaves those the plan says, when it says.
 *
 * It prints one line per fact, `soak <json>`: `ready` (with the emulator time the plan counts from),
 * `run` as each run ends, and `report` at the end (heaps, unhandled errors, whether the budget went
 * idle). Then it closes its budget and must exit by itself: a timer, socket or listener left open
 * would keep it alive, and the soak counts that as a leak.
 * Config: one JSON argument (see `SoakClientConfig`). Run with `--expose-gc`.
 */
import { type Subscription } from 'rxjs';
import { createClient } from '../../src/client.js';
import { clockScheduler, createScaledClock } from '../../src/emulator/index.js';
import { mulberry32 } from '../../src/emulator/engine/seeded-random.js';
import { createRedisBudget } from '../../src/redis/index.js';
import type { RunEnding, RunError } from './soak-audit.js';
import { runPlan, type PlannedRun, type RunPlanOptions } from './run-plan.js';

export interface SoakClientConfig {
  readonly socket: string;
  readonly account: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly speed: number;
  readonly realStart: number;
  readonly canvasId: string;
  readonly seed: number;
  readonly plan: RunPlanOptions;
  /** The account's limits, as the emulator's. */
  readonly requestsPerMinute: number;
  readonly requestsPerDay: number;
  /** The heap is read after the first this many runs ended (the warm-up batch) and at the end. */
  readonly warmupRuns: number;
  /** Outages go on until this long after `ready` (emulator ms): the client stays, budget open, at least until then. */
  readonly outagesForMs: number;
  /** Once every run ended, how long the budget must stay idle (no request queued or in flight) before the client closes. */
  readonly idleMs: number;
  /** The most the client waits for that, once every run ended. */
  readonly tailMs: number;
}

/** What the client says at the end. */
export interface SoakClientReport {
  readonly heapWarmBytes: number;
  readonly heapEndBytes: number;
  readonly unhandled: readonly string[];
  /** Whether the budget went idle for `idleMs` before `tailMs` ran out. */
  readonly idleAtEnd: boolean;
  /** Emulator ms from `ready` to the last run's end. */
  readonly runsTookMs: number;
}

/** One line of the client's output. */
export type SoakClientLine =
  | { readonly type: 'ready'; readonly soakStart: number }
  /** `atMs`: emulator ms from `ready` to the run's end. */
  | { readonly type: 'run'; readonly key: string; readonly atMs: number; readonly ending: RunEnding }
  | { readonly type: 'report'; readonly report: SoakClientReport }
  /** On SIGUSR2 (the soak found the client stuck): the runs not ended yet, each with its last events, and what keeps the process alive. */
  | { readonly type: 'stuck'; readonly open: readonly OpenRun[]; readonly resources: readonly string[] };

/** A run not ended yet, with its last events (`type` and status), emulator ms from `ready`. */
export interface OpenRun {
  readonly key: string;
  readonly events: readonly string[];
}

const say = (line: SoakClientLine): void => {
  process.stdout.write(`soak ${JSON.stringify(line)}\n`);
};

const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => {
  unhandled.push(`unhandledRejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
});
process.on('uncaughtException', (error) => {
  unhandled.push(`uncaughtException: ${error.stack ?? error.message}`);
});

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('soak-client.ts needs node --expose-gc');
/** The heap after full collections, with a turn of the loop between them for finalizers. */
async function heapAfterCollection(): Promise<number> {
  for (let pass = 0; pass < 3; pass += 1) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

function describe(error: unknown): RunError {
  const fields = (error ?? {}) as { name?: unknown; code?: unknown; endpoint?: unknown; executionId?: unknown; message?: unknown };
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  return {
    name: text(fields.name) ?? 'unknown',
    code: text(fields.code),
    endpoint: text(fields.endpoint),
    executionId: text(fields.executionId),
    message: text(fields.message) ?? String(error),
  };
}

const config = JSON.parse(process.argv[2] ?? '{}') as SoakClientConfig;
const clock = createScaledClock(config.speed, Date.now, config.realStart);
const scheduler = clockScheduler(clock);
const budget = createRedisBudget({
  redis: `redis+unix://${config.socket}`,
  account: config.account,
  timeScale: config.speed,
  scheduler,
  requestsPerMinute: config.requestsPerMinute,
  requestsPerDay: config.requestsPerDay,
});
const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, budget, scheduler });
const plan = runPlan(mulberry32(config.seed), config.plan);

/** Resolves after `ms` on the emulator's clock. */
const after = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    scheduler.schedule(() => {
      resolve();
    }, Math.max(0, ms));
  });

/** The runs not ended yet, with their last events: what a stuck soak reports. */
const open = new Map<string, string[]>();
const LAST_EVENTS = 12;

/** Follows one run until it ends or its subscriber leaves, as the plan says. */
function follow(run: PlannedRun): Promise<RunEnding> {
  return new Promise((resolve) => {
    let ending: RunEnding | undefined;
    let leave: Subscription | undefined;
    const events: string[] = [];
    open.set(run.key, events);
    const end = (value: RunEnding): void => {
      if (ending !== undefined) return;
      ending = value;
      open.delete(run.key);
      leave?.unsubscribe();
      resolve(value);
    };
    const subscription = client.run(config.canvasId, { variables: { soak: run.key } }).subscribe({
      next: (event) => {
        const detail = event.type === 'status' || event.type === 'node' || event.type === 'started' ? ` ${'nodeId' in event ? `${event.nodeId} ` : ''}${event.status}` : '';
        events.push(`${String(clock.now() - soakStart)} ${event.type}${detail} ${event.executionId}`);
        if (events.length > LAST_EVENTS) events.shift();
        if (event.type === 'finished') end({ kind: 'finished', executionId: event.executionId, status: event.result.status });
      },
      // A failed workflow errors after its `finished`, which already ended the run here.
      error: (error: unknown) => {
        end({ kind: 'errored', error: describe(error) });
      },
      complete: () => {
        end({ kind: 'errored', error: { name: 'Completed', code: undefined, endpoint: undefined, executionId: undefined, message: 'completed without `finished`' } });
      },
    });
    const leaveNow = (): void => {
      if (ending !== undefined) return;
      end({ kind: 'left' });
      subscription.unsubscribe();
    };
    if (run.leaveAfterMs === 0) leaveNow();
    else if (run.leaveAfterMs !== undefined) leave = scheduler.schedule(leaveNow, run.leaveAfterMs);
  });
}

/** Waits until the budget has had nothing queued or in flight for `idleMs`, at most `tailMs`. */
async function budgetIdle(): Promise<boolean> {
  const step = 1_000;
  let idleFor = 0;
  for (let waited = 0; waited < config.tailMs; waited += step) {
    const { queued, inFlight } = budget.snapshot();
    idleFor = queued.total === 0 && inFlight === 0 ? idleFor + step : 0;
    if (idleFor >= config.idleMs) return true;
    await after(step);
  }
  return false;
}

process.on('SIGUSR2', () => {
  say({ type: 'stuck', open: [...open].map(([key, events]) => ({ key, events })), resources: process.getActiveResourcesInfo() });
});

const soakStart = clock.now();
say({ type: 'ready', soakStart });
let warm: Promise<number> | undefined;
let warmupLeft = Math.min(config.warmupRuns, plan.length);
await Promise.all(
  plan.map(async (run) => {
    await after(soakStart + run.startAtMs - clock.now());
    const ending = await follow(run);
    say({ type: 'run', key: run.key, atMs: clock.now() - soakStart, ending });
    warmupLeft -= 1;
    if (warmupLeft === 0) warm = heapAfterCollection();
  }),
);
const runsTookMs = clock.now() - soakStart;
await after(soakStart + config.outagesForMs - clock.now());
const idleAtEnd = await budgetIdle();
const heapWarmBytes = (await warm) ?? 0;
const heapEndBytes = await heapAfterCollection();
await budget.close();
say({ type: 'report', report: { heapWarmBytes, heapEndBytes, unhandled, idleAtEnd, runsTookMs } });
// Nothing may keep the process alive now; if something does, it says what (this timer keeps nothing alive).
setTimeout(() => {
  say({ type: 'stuck', open: [], resources: process.getActiveResourcesInfo() });
}, 2_000).unref();
