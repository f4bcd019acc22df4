import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ReadNeed } from '../domain/budget.js';
import type { DurationModel } from '../domain/durations.js';
import type { Logger } from '../domain/model.js';
import { DEFAULTS } from '../domain/options.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { timerDelay } from '../http/options.js';
import { type CadenceBounds, cadenceBounds, OUTPUT_MODES, type OutputMode, type PollInterval } from './poll-plan.js';
import type { RunHub } from './run-hub.js';
import type { RunTelemetryHook } from './run-telemetry.js';

/**
 * Options of one run or watch.
 *
 * @example
 * ```ts
 * client.run('c-1', {}, { timeoutMs: 10 * 60_000, output: 'final', pollInterval: { maxMs: 5000 } });
 * ```
 */
export interface RunOptions {
  /** Bounds of the status cadence; defaults to the client's `polling`, then 500 ms / 10 s. */
  readonly pollInterval?: PollInterval;
  /** Overall deadline from subscription: the execution is aborted and the run errors with `RunTimeoutError`. */
  readonly timeoutMs?: number;
  /** `stream` (default): message events while nodes run. `final`: the output is read once, at the end. */
  readonly output?: OutputMode;
  /**
   * Abort the execution when unsubscribed before `finished`. Default: true for `run`, false for
   * `watch`. A watch shares its execution's poll with the client's other watches and runs of it (the
   * client's `hub`): it aborts only when nothing else there still follows the execution.
   */
  readonly abortOnUnsubscribe?: boolean;
  /** Error with `WorkflowFailedError` after a `failed` result (default true); false completes instead. */
  readonly failOnWorkflowError?: boolean;
  /**
   * Aborting this signal ends the run like an unsubscribe (the execution is aborted when
   * `abortOnUnsubscribe` says so) and the Observable errors with `signal.reason`, so that a pipeline
   * waiting on the run stops instead of taking it for a success.
   */
  readonly signal?: AbortSignal;
  /**
   * Aborting this signal leaves the run without touching its execution: the run stops following it
   * and completes (no `finished`), and the execution goes on, for another process to `watch`. A start
   * on its way is let through first, so the run completes after its `started`. For a service's
   * graceful shutdown (SIGTERM → detach), where `signal` is a user's cancel.
   */
  readonly detach?: AbortSignal;
  /**
   * `run`, `startRun`: read the workflow's plan first and check the variables against it — an unknown
   * name ("did you mean"), a required one left out, a value outside its options — erroring with
   * `InvalidArgumentError` before the start is sent (the service checks none of it, service.md §5.4, and a
   * wrong run costs credits). One more request. Default false.
   */
  readonly checkVariables?: boolean;
  /**
   * When the execution fails while other branches still run (service.md §3.3): `'leave'` them running
   * (the result lists them in `runningNodes`), `'abort'` the execution once (it stops spending credits,
   * §3.5), or `'follow'` them to their end before `finished`. Default `'leave'`.
   */
  readonly onFailedBranches?: FailedBranches;
  /**
   * How long the run follows its execution through an outage: while reads fail for want of an answer
   * (the connection refused or dropped, timeouts, 5xx, a request budget that cannot reach its store),
   * it reads again with backoff, through the budget, and says so (`connection` events,
   * `RunState.reconnecting`); once reads succeed it goes on as before. An outage longer than this, from
   * its first failed read, ends the run with the last error, carrying the `executionId` (the execution
   * is left running, for a later `watch`). `0`: the first failed read ends the run. Default: the
   * client's `outageMs`, then 10 minutes.
   */
  readonly outageMs?: number;
  /**
   * The parent of the run's telemetry, for the client's `telemetry` hook (with `flowstream/otel`, an
   * OpenTelemetry `Context`: the run's span goes under its span). Ignored without a hook.
   */
  readonly telemetryParent?: unknown;
}

/** Defaults shared by every run of a client. */
export interface RunsDefaults {
  /** The client's `polling` option. */
  readonly polling?: PollInterval;
  /** The client's `outageMs`: how long every run follows through an outage (`RunOptions.outageMs`). */
  readonly outageMs?: number;
  /** Where unknown statuses and failed background aborts are reported. */
  readonly logger?: Logger;
  /** Drives every timer of a run; a `TestScheduler` in tests. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** The jitter source, in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
  /**
   * The request budget's scheduler of reads (`AccountBudget.needRead`): each run registers its next
   * read's need there. None: every run times its own reads by the same rule.
   */
  readonly needRead?: (executionId: string, need: ReadNeed) => () => void;
  /** Learned node durations: reads are timed where a change is likely. None: the cadence alone. */
  readonly durations?: DurationModel;
  /** Where watches share one poll per execution and runs offer theirs (`createRunHub`). None: every watch polls on its own. */
  readonly hub?: RunHub;
  /** Where every run reports its subscription, events and end (`ClientOptions.telemetry`). None: no telemetry work. */
  readonly telemetry?: RunTelemetryHook;
}

/** Every option of one run, filled in. */
export interface RunSettings {
  readonly bounds: CadenceBounds;
  readonly timeoutMs: number | undefined;
  readonly output: OutputMode;
  readonly abortOnUnsubscribe: boolean;
  readonly failOnWorkflowError: boolean;
  readonly onFailedBranches: FailedBranches;
  readonly outageMs: number;
  readonly signal: AbortSignal | undefined;
  readonly detach: AbortSignal | undefined;
  readonly scheduler: SchedulerLike;
  readonly random: () => number;
  readonly needRead: ((executionId: string, need: ReadNeed) => () => void) | undefined;
  readonly durations: DurationModel | undefined;
  readonly logger: Logger | undefined;
}

/**
 * What a run does with branches still running when the execution has failed (`RunOptions.onFailedBranches`).
 *
 * @example
 * ```ts
 * client.run('c-1', {}, { onFailedBranches: 'abort' });
 * ```
 */
export type FailedBranches = 'leave' | 'abort' | 'follow';

const FAILED_BRANCHES: readonly unknown[] = ['leave', 'abort', 'follow'] satisfies readonly FailedBranches[];

function failedBranches(given: FailedBranches | undefined): FailedBranches {
  const value: unknown = given ?? 'leave';
  if (!FAILED_BRANCHES.includes(value)) throw new InvalidArgumentError('onFailedBranches', `must be 'leave', 'abort' or 'follow' (got ${String(value)})`);
  return value as FailedBranches;
}

/** An outage's length: 0 (never read through one) or a timer's delay. */
export function outageMs(value: unknown): number {
  return value === 0 ? 0 : timerDelay('outageMs', value);
}

/**
 * Fills in a run's options from the client's defaults; `kind` decides `abortOnUnsubscribe`. A value
 * that cannot be meant (a negative `timeoutMs`, an `output` that is neither mode) is an
 * `InvalidArgumentError`, not a guess.
 */
export function runSettings(kind: 'run' | 'watch', options: RunOptions = {}, defaults: RunsDefaults = {}): RunSettings {
  const { timeoutMs, output = 'stream' } = options;
  if (timeoutMs !== undefined) timerDelay('timeoutMs', timeoutMs);
  // Typed as a mode, but a JavaScript caller can pass anything.
  const given: unknown = output;
  if (!OUTPUT_MODES.includes(given)) throw new InvalidArgumentError('output', `must be 'stream' or 'final' (got ${String(given)})`);
  return {
    bounds: cadenceBounds(options.pollInterval, defaults.polling),
    timeoutMs,
    output,
    abortOnUnsubscribe: options.abortOnUnsubscribe ?? kind === 'run',
    failOnWorkflowError: options.failOnWorkflowError ?? true,
    onFailedBranches: failedBranches(options.onFailedBranches),
    outageMs: outageMs(options.outageMs ?? defaults.outageMs ?? DEFAULTS.outageMs),
    signal: options.signal,
    detach: options.detach,
    scheduler: defaults.scheduler ?? asyncScheduler,
    random: defaults.random ?? Math.random,
    needRead: defaults.needRead,
    durations: defaults.durations,
    logger: defaults.logger,
  };
}
