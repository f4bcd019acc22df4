import { asyncScheduler, Observable, type Observer, type SchedulerLike, Subscription, tap } from 'rxjs';
import type { ReadNeed } from '../domain/budget.js';
import type { DurationModel } from '../domain/durations.js';
import type { ExecutionOutput, ExecutionSnapshot, ExecutionStatus, Logger, PlanVariable, RunEnding, RunResult, StartedExecution, Variables, WorkflowPlan } from '../domain/model.js';
import { DEFAULTS } from '../domain/options.js';
import { planSchema, unknownVariableProblem } from '../domain/plan-schema.js';
import { RunTimeoutError, WorkflowFailedError } from '../errors/run-errors.js';
import { abortSignalArgument, booleanArgument, InvalidArgumentError, oneOf, timerDelay } from '../errors/validation-errors.js';
import type { CallOptions, ExecutionsApi } from '../http/calls.js';
import { executionReads } from '../http/resources.js';
import { startedNothing } from '../http/transport.js';
import type { FinishedEvent, RunEvent } from './events.js';
import { initialView, isExecutionOver, runResultOf } from './execution-view.js';
import type { IdempotencyStore } from './idempotency.js';
import { afterFailure, cadenceBounds, isBudgetUnavailable, type Outage, outlasted, type OutputMode, pollExecution, type PollInterval, type PollRead, type PollSettings, ReadNow, reducerShell, type Step } from './poll.js';
import type { RunHub } from './run-hub.js';
import { RunReader, withReading } from './run-state.js';

/*
 * A run's life, from its subscription to its end: its settings (`runSettings`), the shell that
 * performs it (`runLifecycle`), what a telemetry hook hears of it, its rules as a pure reducer
 * (`reduceRun`: how it starts, follows, is left, aborted or detached, and ends), and its seam onto the
 * execution endpoints (`ExecutionSource`: the start, its variables checked against the plan, the
 * reads, and the abort sent in the background).
 */

// --- a run's settings ----------------------------------------------------------------------------

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
   * (the result lists them in `runningNodes`), `'abort'` the execution once, or `'follow'` them to their
   * end before `finished`. Default `'leave'`. The service answers an abort of a failed execution with
   * success, and does not say whether it stops the branches still running (§3.5): `'abort'` asks it to,
   * and the result lists them as they were; the emulator leaves them running.
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
   * `run`, `startRun`: makes the start idempotent. The first run with the key starts the execution;
   * every later run with it, while the key lives (`idempotencyTtlMs` from that first claim), follows
   * the same execution instead of starting one — its events and result are the first's (a run that
   * comes while the first's start is still on its way waits for its answer; `signal` ends that wait,
   * `timeoutMs` counts from when it starts or follows). Only the run that started the execution aborts
   * it when left (`abortOnUnsubscribe`, `signal`); a follower leaving leaves it running (a follower's
   * explicit stops — its `timeoutMs`, a `startRun` handle's `cancel()` — do abort it). A start that
   * surely started nothing (never sent, or refused by the service) frees the key for the next run. A
   * start whose answer is lost — it may have reached the service — leaves the key in doubt: later runs
   * with it error with `StartInDoubtError` until it expires, never starting a second execution. Keys
   * live in the client's `idempotency` store: its own memory by default, `createRedisIdempotencyStore`
   * of `flowstream/redis` for a fleet. Not the service's duplicate-run window (service.md §2.2), which
   * only refuses an identical start within a second.
   *
   * @example
   * ```ts
   * client.run('c-invoice', { variables: { invoiceId } }, { idempotencyKey: `invoice-${invoiceId}` });
   * ```
   */
  readonly idempotencyKey?: string;
  /** How long an idempotency key lives from its first claim. Default 24 hours. */
  readonly idempotencyTtlMs?: number;
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
   * Where the request budget times the runs' reads (`AccountBudget.needRead`): each run registers its
   * next read's need there. None: every run times its own reads by the same rule.
   */
  readonly needRead?: (executionId: string, need: ReadNeed) => () => void;
  /** Learned node durations: reads are timed where a change is likely. None: the cadence alone. */
  readonly durations?: DurationModel;
  /** Where watches share one poll per execution and runs offer theirs (`createRunHub`). None: every watch polls on its own. */
  readonly hub?: RunHub;
  /** Where every run reports its subscription, events and end (`ClientOptions.telemetry`). None: no telemetry work. */
  readonly telemetry?: RunTelemetryHook;
  /** Where runs with an `idempotencyKey` keep it (`ClientOptions.idempotency`). None: a store in memory, made at the first such run. */
  readonly idempotency?: IdempotencyStore;
}

/** Every option of one run, filled in. */
export interface RunSettings extends PollSettings {
  readonly timeoutMs: number | undefined;
  readonly abortOnUnsubscribe: boolean;
  readonly failOnWorkflowError: boolean;
  readonly signal: AbortSignal | undefined;
  readonly detach: AbortSignal | undefined;
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

/** An outage's length: 0 (never read through one) or a timer's delay. */
export function checkOutageMs(value: unknown): number {
  return value === 0 ? 0 : timerDelay('outageMs', value);
}

/**
 * Fills in a run's options from the client's defaults; `kind` decides `abortOnUnsubscribe`. A value
 * that cannot be meant (a negative `timeoutMs`, an `output` that is neither mode, a run's
 * `idempotencyTtlMs` without an `idempotencyKey`) is an `InvalidArgumentError`, not a guess. A key is
 * checked by the run that uses it (idempotency.ts): a run without one runs none of that code.
 */
export function runSettings(kind: 'run' | 'watch', options: RunOptions = {}, defaults: RunsDefaults = {}): RunSettings {
  const { timeoutMs } = options;
  if (timeoutMs !== undefined) timerDelay('timeoutMs', timeoutMs);
  // Defaulted only when absent: a `null` from JavaScript is refused, not read as the default.
  const output = oneOf<OutputMode>('output', options.output === undefined ? 'stream' : options.output, ['stream', 'final']);
  const settings: RunSettings = {
    bounds: cadenceBounds(options.pollInterval, defaults.polling),
    timeoutMs,
    output,
    // Checked, not coerced: from JavaScript, `'false'` is truthy and would mean the opposite.
    abortOnUnsubscribe: booleanArgument('abortOnUnsubscribe', options.abortOnUnsubscribe) ?? kind === 'run',
    failOnWorkflowError: booleanArgument('failOnWorkflowError', options.failOnWorkflowError) ?? true,
    onFailedBranches: oneOf<FailedBranches>('onFailedBranches', options.onFailedBranches ?? 'leave', ['leave', 'abort', 'follow']),
    outageMs: checkOutageMs(options.outageMs ?? defaults.outageMs ?? DEFAULTS.outageMs),
    signal: abortSignalArgument('signal', options.signal),
    detach: abortSignalArgument('detach', options.detach),
    scheduler: defaults.scheduler ?? asyncScheduler,
    random: defaults.random ?? Math.random,
    needRead: defaults.needRead,
    durations: defaults.durations,
    logger: defaults.logger,
  };
  booleanArgument('checkVariables', options.checkVariables);
  if (kind === 'run' && options.idempotencyKey === undefined && options.idempotencyTtlMs !== undefined) throw new InvalidArgumentError('idempotencyTtlMs', 'needs an idempotencyKey');
  return settings;
}

// --- a run's lifecycle: the shell ----------------------------------------------------------------

/** Where a run's execution comes from: a start of its own, or an existing one to follow. */
type RunTarget =
  | {
      readonly kind: 'start';
      readonly canvasId: string;
      /** The start request, made per subscription; unsubscribing takes it back while nothing of it is on its way. */
      readonly start: () => Observable<StartProgress>;
      /** The workflow's task nodes, once the start read its plan (`checkVariables`, `startExecution`'s `onPlan`). */
      readonly plannedTasks?: () => readonly { readonly nodeId: string }[] | undefined;
    }
  /** `canvasId`, when known (a run following the execution its idempotency key started), goes on its `started` event and result. */
  | { readonly kind: 'watch'; readonly executionId: string; readonly canvasId?: string | undefined };

/**
 * One subscription to a run: the shell of `reduceRun` (below, where the rules are). It turns
 * the subscriber, the signal, the deadline and `control` into events, and the machine's commands into
 * the start's and the poll's subscriptions, background aborts and readings (`RunReading`: one per read
 * that changed something, `seq` 1, 2, 3…), whose events it emits, each carrying its reading (`readingOf`).
 */
export function runLifecycle(source: ExecutionSource, target: RunTarget, settings: RunSettings, control?: Observable<RunControl>): Observable<RunEvent> {
  return new Observable<RunEvent>((subscriber) => {
    const reader = new RunReader(settings.scheduler);
    // The signals', the deadline's and the control's subscriptions; most runs have none.
    let listening: Subscription | undefined;
    const listen = (teardown: Subscription | (() => void)): void => {
      (listening ??= new Subscription()).add(teardown);
    };
    let starting: Subscription | undefined;
    let following: Subscription | undefined;
    // Cuts the poll's wait short once an abort answered.
    const readNow = new ReadNow();

    const perform = (command: LifecycleCommand): void => {
      switch (command.type) {
        case 'start':
          // A subscriber that left on an event of this same batch gets nothing new; the machine hears of it next.
          if (subscriber.closed || target.kind !== 'start') return;
          starting = waitOutUnsentStart(target.start, settings).subscribe({
            next: (progress) => {
              dispatch(progress);
            },
            error: (error: unknown) => {
              dispatch({ type: 'start-failed', error });
            },
          });
          return;
        case 'drop-start':
          starting?.unsubscribe();
          return;
        case 'follow':
          if (subscriber.closed) return;
          following = pollExecution(source, command, settings, readNow).subscribe(new PollHeard(dispatch));
          return;
        case 'stop-following':
          following?.unsubscribe();
          return;
        case 'abort':
          abortInBackground(source, command.executionId, settings, () => {
            dispatch({ type: 'abort-answered' });
          });
          return;
        case 'start-in-doubt':
          settings.logger?.warn('The start of a run that was left may have reached the service, but its answer was lost: its execution, if one was started, is not aborted', {
            canvasId: target.kind === 'start' ? target.canvasId : undefined,
            error: command.error,
          });
          return;
        case 'read-now':
          readNow.readNow();
          return;
        case 'emit': {
          const planned = target.kind === 'start' ? target.plannedTasks?.() : undefined;
          if (planned !== undefined) reader.knowPlannedTasks(planned);
          for (const event of withReading(reader.read(command.events, command.tasks)).events) {
            // A subscriber that left before `finished` left a run not over (`RunPhase`, `ending`).
            if (subscriber.closed) return;
            if (event.type === 'finished') dispatch({ type: 'finished-delivered' });
            subscriber.next(event);
          }
          return;
        }
        case 'complete':
          subscriber.complete();
          return;
        case 'error':
          subscriber.error(command.executionId === undefined ? command.error : withExecutionId(command.error, command.executionId));
          return;
        default:
          command satisfies never;
      }
    };
    const rules: RunRules = {
      origin: target.kind === 'start' ? { kind: 'start', canvasId: target.canvasId } : target,
      abortOnUnsubscribe: settings.abortOnUnsubscribe,
      failOnWorkflowError: settings.failOnWorkflowError,
      onFailedBranches: settings.onFailedBranches,
      timeoutMs: settings.timeoutMs,
    };
    const dispatch = reducerShell(reduceRun, initialRun(rules), perform);

    /** `event` once `signal` aborts: at once when it already has. */
    const onAbort = (signal: AbortSignal | undefined, event: () => LifecycleEvent): void => {
      if (signal?.aborted === true) dispatch(event());
      else if (signal !== undefined) {
        const aborted = (): void => {
          dispatch(event());
        };
        signal.addEventListener('abort', aborted, { once: true });
        listen(() => {
          signal.removeEventListener('abort', aborted);
        });
      }
    };
    const { signal, timeoutMs } = settings;
    onAbort(signal, () => ({ type: 'signal', reason: signal?.reason }));
    if (timeoutMs !== undefined) {
      listen(
        settings.scheduler.schedule(() => {
          dispatch({ type: 'deadline' });
        }, timeoutMs),
      );
    }
    dispatch({ type: 'subscribe' });
    onAbort(settings.detach, () => ({ type: 'control', control: 'detach' }));
    if (control !== undefined) {
      listen(
        control.subscribe((order) => {
          dispatch({ type: 'control', control: order });
        }),
      );
    }
    return () => {
      listening?.unsubscribe();
      dispatch({ type: 'unsubscribe' });
    };
  });
}

/**
 * The poll's reads, its error and its end, told to the run's machine: methods of one object rather
 * than three closures, since every watched run holds its poll's observer.
 */
class PollHeard implements Observer<PollRead> {
  readonly #dispatch: (event: LifecycleEvent) => void;

  constructor(dispatch: (event: LifecycleEvent) => void) {
    this.#dispatch = dispatch;
  }

  next(read: PollRead): void {
    this.#dispatch({ type: 'poll-read', read });
  }

  error(error: unknown): void {
    this.#dispatch({ type: 'poll-error', error });
  }

  complete(): void {
    this.#dispatch({ type: 'poll-complete' });
  }
}

/**
 * Marks an error that ended a run with the execution it belongs to (so that the caller can
 * `watch()` it later). The error keeps its class, message and stack — a `NetworkError` stays a
 * `NetworkError` — and gains `executionId` (as `FlowstreamError` declares it) when it has none yet.
 * Values that cannot carry a property (primitives, frozen objects) are returned unchanged.
 */
export function withExecutionId(error: unknown, executionId: string): unknown {
  if (typeof error !== 'object' || error === null || !Object.isExtensible(error)) return error;
  if ((error as { executionId?: unknown }).executionId !== undefined) return error;
  Object.defineProperty(error, 'executionId', { value: executionId, enumerable: true, configurable: true, writable: false });
  return error;
}

// --- a run as a telemetry hook sees it -----------------------------------------------------------

/**
 * A run, a watch or a run handle about to follow an execution.
 *
 * @example
 * ```ts
 * const start: RunTelemetryStart = { kind: 'run', canvasId: 'c-1', at: scheduler.now() };
 * ```
 */
export interface RunTelemetryStart {
  readonly kind: 'run' | 'watch';
  readonly canvasId?: string;
  readonly executionId?: string;
  /** What the caller gave as the parent of its telemetry (`RunOptions.telemetryParent`), opaque to the client. */
  readonly parent?: unknown;
  /** When it was subscribed, on the client's scheduler. */
  readonly at: number;
}

/**
 * How a run's subscription ended: `completed` and `error` as its Observable did, `unsubscribed` when
 * its subscriber left first.
 *
 * @example
 * ```ts
 * observer.end({ at: scheduler.now(), outcome: 'error', error });
 * ```
 */
export interface RunTelemetryEnd {
  readonly at: number;
  readonly outcome: 'completed' | 'error' | 'unsubscribed';
  readonly error?: unknown;
}

/**
 * The observer of one run, handed back by {@link RunTelemetryHook.run}.
 *
 * @example
 * ```ts
 * const observer: RunTelemetry = { parent: runContext, event: (event) => log(event.type), end: () => undefined };
 * ```
 */
export interface RunTelemetry {
  /** The parent the run's requests are reported under (`RequestTelemetryStart.parent`). */
  readonly parent?: unknown;
  /** Every event of the run, with the time it was emitted on the client's scheduler. */
  event(event: RunEvent, at: number): void;
  /** Told once, when the run's subscription ends. */
  end(end: RunTelemetryEnd): void;
}

/**
 * Where a client reports its runs, watches and run handles.
 *
 * @example
 * ```ts
 * const hook: RunTelemetryHook = { run: (start) => ({ event: () => undefined, end: (end) => console.log(start.kind, end.outcome) }) };
 * ```
 */
export interface RunTelemetryHook {
  run(start: RunTelemetryStart): RunTelemetry;
}

/**
 * A run followed under telemetry: `follow` makes the run over a view of `source` whose requests are
 * reported under the run, and the hook hears of the subscription, every event and the end. Without a
 * hook, it is `follow(source)` and nothing else.
 */
export function observedRun(
  hook: RunTelemetryHook | undefined,
  source: ExecutionSource,
  start: Omit<RunTelemetryStart, 'at'>,
  scheduler: SchedulerLike,
  follow: (source: ExecutionSource) => Observable<RunEvent>,
): Observable<RunEvent> {
  if (hook === undefined) return follow(source);
  return lazy(() => {
    const observer = hook.run({ ...start, at: scheduler.now() });
    const end = (outcome: RunTelemetryEnd['outcome'], error?: unknown): void => {
      observer.end({ at: scheduler.now(), outcome, ...(outcome === 'error' ? { error } : {}) });
    };
    // `unsubscribe` is told only of a subscriber that left before the end: the hook hears of one end.
    return follow(observer.parent === undefined ? source : withTelemetryParent(source, observer.parent)).pipe(
      tap({
        next: (event) => {
          observer.event(event, scheduler.now());
        },
        error: (error: unknown) => {
          end('error', error);
        },
        complete: () => {
          end('completed');
        },
        unsubscribe: () => {
          end('unsubscribed');
        },
      }),
    );
  });
}

// --- a run's rules: a pure reducer ---------------------------------------------------------------
/** A run handle stopped the execution: `by` what, and whether a status had already shown it ended. */
export interface RunStop {
  readonly by: Extract<RunEnding, 'aborted' | 'timeout'>;
  readonly afterEnd: boolean;
}

/**
 * The `finished` event as this client saw the end: an execution that failed after our abort was
 * aborted (service.md §3.5: the service has no aborted status, it reads `failed`). One that had ended
 * before the stop, or finished anyway, keeps its own ending.
 */
export function stoppedEnding(stop: RunStop | undefined, event: FinishedEvent): FinishedEvent {
  if (stop === undefined || stop.afterEnd || event.result.status !== 'failed') return event;
  return { ...event, result: { ...event.result, endedBy: stop.by } };
}

/**
 * What a run handle asks of its run while it lasts. `cancel` and `timeout` abort the execution (or
 * drop a start not sent yet) and go on following it to its end, so that the last `finished` says how
 * it ended (`endedBy: 'aborted' | 'timeout'`); `detach` stops following and leaves the execution
 * running, once the start has answered.
 */
export type RunControl = 'cancel' | 'timeout' | 'detach';

/** The rules of one run: where its execution comes from, and its settings that decide how it ends. */
export interface RunRules {
  readonly origin: { readonly kind: 'start'; readonly canvasId: string } | { readonly kind: 'watch'; readonly executionId: string; readonly canvasId?: string | undefined };
  readonly abortOnUnsubscribe: boolean;
  readonly failOnWorkflowError: boolean;
  readonly onFailedBranches: FailedBranches;
  readonly timeoutMs: number | undefined;
}

/** What happens to a run: its subscriber, its start's progress, its handle, its clock, its poll, its abort. */
export type LifecycleEvent =
  | { readonly type: 'subscribe' }
  | { readonly type: 'sending'; readonly sending: boolean }
  | { readonly type: 'started'; readonly execution: StartedExecution }
  | { readonly type: 'start-failed'; readonly error: unknown }
  | { readonly type: 'control'; readonly control: RunControl }
  | { readonly type: 'signal'; readonly reason: unknown }
  | { readonly type: 'deadline' }
  | { readonly type: 'unsubscribe' }
  | { readonly type: 'poll-read'; readonly read: PollRead }
  | { readonly type: 'poll-error'; readonly error: unknown }
  | { readonly type: 'poll-complete' }
  /** `finished` is about to reach the subscriber: the events before it did. */
  | { readonly type: 'finished-delivered' }
  | { readonly type: 'abort-answered' };

/**
 * What the run asks its shell to do. `drop-start` unsubscribes the start: the call is cancelled, and
 * while nothing of it is on its way no execution exists. `abort` is sent in the background, outside
 * the subscription; `read-now` cuts the poll's wait short. `start-in-doubt`: a start let through after
 * its run was left failed without an answer (its request timeout passed, its connection was lost): an
 * execution may have started that nothing aborts, which the shell reports as a warning.
 */
export type LifecycleCommand =
  | { readonly type: 'start' }
  | { readonly type: 'drop-start' }
  | { readonly type: 'follow'; readonly executionId: string; readonly canvasId: string | undefined; readonly startedStatus: ExecutionStatus | undefined }
  | { readonly type: 'stop-following' }
  | { readonly type: 'abort'; readonly executionId: string }
  | { readonly type: 'start-in-doubt'; readonly error: unknown }
  | { readonly type: 'read-now' }
  /** The events of one reading, and the task nodes an output read listed (`PollRead.tasks`). */
  | { readonly type: 'emit'; readonly events: readonly RunEvent[]; readonly tasks?: PollRead['tasks'] }
  | { readonly type: 'complete' }
  | { readonly type: 'error'; readonly error: unknown; readonly executionId?: string };

/**
 * Where the run is. `starting`: the start is subscribed, `sending` while a request of it is on its way
 * (the execution may exist from then on). `ending`: the reading with `finished` is being delivered; a
 * subscriber that leaves before `finished` reached it leaves a run not over. `finishing`: `finished` was delivered, the poll is about to
 * complete. `leaving`: the subscriber is gone (or was sent an error) while the start was on its way;
 * the start is kept only to abort its execution once the id arrives.
 */
type RunPhase =
  | { readonly name: 'idle' }
  | { readonly name: 'starting'; readonly sending: boolean; readonly detaching: boolean }
  | { readonly name: 'following'; readonly executionId: string }
  | { readonly name: 'ending'; readonly executionId: string; readonly result: RunResult }
  | { readonly name: 'finishing'; readonly executionId: string; readonly result: RunResult }
  | { readonly name: 'leaving' }
  | { readonly name: 'closed' };

interface RunMachine {
  readonly rules: RunRules;
  readonly phase: RunPhase;
  /** A status of the execution said `finish` or `failed`. */
  readonly seenEnd: boolean;
  readonly stop: RunStop | undefined;
  readonly abortSent: boolean;
}

type RunStep = Step<RunMachine, LifecycleCommand>;

export function initialRun(rules: RunRules): RunMachine {
  return { rules, phase: { name: 'idle' }, seenEnd: false, stop: undefined, abortSent: false };
}

/**
 * The life of one subscription to a run, as a pure reducer; these are the rules of how a run
 * ends. `finished`/finish completes; `finished`/failed errors with `WorkflowFailedError` unless
 * `failOnWorkflowError` is false; a failed request errors carrying the `executionId` and leaves the
 * execution alone. Leaving early (unsubscribe, `signal`, `timeoutMs`) aborts the execution once, in the
 * background; while the start is on its way it is let through (the execution may exist) and aborted
 * once its id arrives, with nothing more emitted (its answer lost instead, the start is in doubt: reported,
 * since an execution may run that nothing aborts). A start not sent yet (waiting in the request budget,
 * or to be sent again) is dropped instead: nothing to abort.
 */
export function reduceRun(machine: RunMachine, event: LifecycleEvent): RunStep {
  const { rules } = machine;
  switch (event.type) {
    case 'subscribe':
      if (machine.phase.name !== 'idle') return stay(machine);
      if (rules.origin.kind === 'watch') return to(machine, followingPhase(rules.origin.executionId), followCommand(rules, rules.origin.executionId, undefined));
      return to(machine, { name: 'starting', sending: false, detaching: false }, { type: 'start' });
    case 'sending':
      return sendingChanged(machine, event.sending);
    case 'started':
      return startAnswered(machine, event.execution);
    case 'start-failed':
      if (machine.phase.name === 'starting') return to(machine, CLOSED, { type: 'error', error: event.error });
      if (machine.phase.name !== 'leaving') return stay(machine);
      // Left while the start was on its way, and its answer is lost: the execution may exist, with no id to abort it by.
      return startedNothing(event.error) ? to(machine, CLOSED) : to(machine, CLOSED, { type: 'start-in-doubt', error: event.error });
    case 'control':
      return steered(machine, event.control);
    case 'signal':
      return left(machine, rules.abortOnUnsubscribe, { type: 'error', error: event.reason });
    case 'deadline':
      // A deadline always aborts: the run is over for its caller, and the execution would spend on.
      if (rules.timeoutMs === undefined) return stay(machine);
      return left(machine, true, { type: 'error', error: new RunTimeoutError(rules.timeoutMs, executionIdOf(machine.phase)) });
    case 'unsubscribe':
      return left(machine, rules.abortOnUnsubscribe, undefined);
    case 'poll-read':
      return polled(machine, event.read);
    case 'poll-error': {
      const executionId = executionIdOf(machine.phase);
      if (executionId === undefined) return stay(machine);
      return to(machine, CLOSED, { type: 'error', error: event.error, executionId });
    }
    case 'poll-complete':
      return pollCompleted(machine);
    case 'finished-delivered':
      return machine.phase.name === 'ending' ? to(machine, { ...machine.phase, name: 'finishing' }) : stay(machine);
    case 'abort-answered':
      // The abort has taken effect (service.md §3.5): read the end now rather than at the cadence's pace.
      return machine.phase.name === 'following' ? { state: machine, commands: [{ type: 'read-now' }] } : stay(machine);
    default:
      return event satisfies never;
  }
}

const CLOSED: RunPhase = { name: 'closed' };

function followingPhase(executionId: string): RunPhase {
  return { name: 'following', executionId };
}

function stay(machine: RunMachine): RunStep {
  return { state: machine, commands: [] };
}

function to(machine: RunMachine, phase: RunPhase, ...commands: LifecycleCommand[]): RunStep {
  const abortSent = machine.abortSent || commands.some((command) => command.type === 'abort');
  return { state: { ...machine, phase, abortSent }, commands };
}

function followCommand(rules: RunRules, executionId: string, startedStatus: ExecutionStatus | undefined): LifecycleCommand {
  return { type: 'follow', executionId, canvasId: canvasIdOf(rules), startedStatus };
}

function canvasIdOf(rules: RunRules): string | undefined {
  return rules.origin.canvasId;
}

function executionIdOf(phase: RunPhase): string | undefined {
  return phase.name === 'following' || phase.name === 'ending' || phase.name === 'finishing' ? phase.executionId : undefined;
}

/** The abort of `executionId`, unless one was sent already: one execution, one abort. */
function abortOnce(machine: RunMachine, executionId: string): LifecycleCommand[] {
  return machine.abortSent ? [] : [{ type: 'abort', executionId }];
}

/**
 * A start stopped while nothing of it was on its way: dropped, and the run ends with no execution — the
 * result of an execution never seen (`executionId: ''`, no nodes, no output), ended by the stop.
 */
function unstarted(machine: RunMachine, stop: RunStop): RunStep {
  const result = { ...runResultOf(initialView(''), 'failed', canvasIdOf(machine.rules) ?? ''), endedBy: stop.by };
  return to({ ...machine, stop }, CLOSED, { type: 'drop-start' }, { type: 'emit', events: [{ type: 'finished', executionId: '', result }] }, { type: 'complete' });
}

function sendingChanged(machine: RunMachine, sending: boolean): RunStep {
  const { phase } = machine;
  if (phase.name === 'starting') {
    // `StartOptions.onSending`: the attempt failed and nothing is on its way; a stop asked meanwhile ends the run here.
    if (!sending && machine.stop !== undefined) return unstarted(machine, machine.stop);
    return to(machine, { ...phase, sending });
  }
  if (phase.name === 'leaving' && !sending) return to(machine, CLOSED, { type: 'drop-start' });
  return stay(machine);
}

function startAnswered(machine: RunMachine, execution: StartedExecution): RunStep {
  const { phase } = machine;
  const { executionId, status } = execution;
  if (phase.name === 'leaving') return to(machine, CLOSED, { type: 'abort', executionId });
  if (phase.name !== 'starting') return stay(machine);
  const canvasId = canvasIdOf(machine.rules);
  const aborting: LifecycleCommand[] = machine.stop === undefined ? [] : [{ type: 'abort', executionId }];
  const started: LifecycleCommand = { type: 'emit', events: [{ type: 'started', executionId, ...(canvasId === undefined ? {} : { canvasId }), status }] };
  const next = { ...machine, seenEnd: machine.seenEnd || isExecutionOver(status) };
  // Detached while the start was on its way: the execution runs on, and the run ends with its id.
  if (phase.detaching) return to(next, CLOSED, ...aborting, started, { type: 'complete' });
  return to(next, followingPhase(executionId), ...aborting, started, followCommand(machine.rules, executionId, status));
}

/**
 * The subscriber leaves, or is made to leave by `error` (its signal, its deadline), before the run
 * ended on its own. `abortWanted`: the execution is to be aborted, now or once its id arrives.
 */
function left(machine: RunMachine, abortWanted: boolean, error: LifecycleCommand | undefined): RunStep {
  const { phase } = machine;
  const failing = error === undefined ? [] : [error];
  switch (phase.name) {
    case 'idle':
      // A signal aborted before the run began: nothing is started.
      return to(machine, CLOSED, ...failing);
    case 'starting':
      // A stop asked earlier wants the abort too. Only a start on its way may have made an execution (service.md §2.2, §3.1).
      if ((abortWanted || machine.stop !== undefined) && phase.sending) return to(machine, { name: 'leaving' }, ...failing);
      return to(machine, CLOSED, { type: 'drop-start' }, ...failing);
    case 'following':
    case 'ending':
      return to(machine, CLOSED, ...(abortWanted ? abortOnce(machine, phase.executionId) : []), { type: 'stop-following' }, ...failing);
    case 'finishing':
      // `finished` was delivered: the run ended on its own, nothing to abort, no other ending.
      return error === undefined ? to(machine, CLOSED, { type: 'stop-following' }) : stay(machine);
    case 'leaving':
    case 'closed':
      return stay(machine);
    default:
      return phase satisfies never;
  }
}

function steered(machine: RunMachine, control: RunControl): RunStep {
  const { phase } = machine;
  if (phase.name !== 'starting' && phase.name !== 'following') return stay(machine);
  if (phase.name === 'starting' && phase.detaching) return stay(machine);
  if (control === 'detach') {
    // A start on its way goes through (the execution keeps running) and the run ends with its id.
    if (phase.name === 'starting') return to(machine, { ...phase, detaching: true });
    return to(machine, CLOSED, { type: 'stop-following' }, { type: 'complete' });
  }
  if (machine.stop !== undefined) return stay(machine);
  const stop: RunStop = { by: control === 'cancel' ? 'aborted' : 'timeout', afterEnd: machine.seenEnd };
  if (phase.name === 'starting') return phase.sending ? to({ ...machine, stop }, phase) : unstarted(machine, stop);
  return to({ ...machine, stop }, phase, ...abortOnce(machine, phase.executionId));
}

/** A read's events go out as one reading; its `finished` says how this client saw the end. */
function polled(machine: RunMachine, read: PollRead): RunStep {
  const { phase } = machine;
  if (phase.name !== 'following') return stay(machine);
  let { seenEnd } = machine;
  let ended: FinishedEvent | undefined;
  const events = read.events.map((event): RunEvent => {
    if (event.type === 'status' || event.type === 'started') seenEnd ||= isExecutionOver(event.status);
    if (event.type !== 'finished') return event;
    ended = stoppedEnding(machine.stop, event);
    return ended;
  });
  const emit: LifecycleCommand = { type: 'emit', events, ...(read.tasks === undefined ? {} : { tasks: read.tasks }) };
  if (ended === undefined) return to({ ...machine, seenEnd }, phase, emit);
  // service.md §3.3, §3.5: branches still running after the failure spend credits; abort them once.
  const branches = machine.rules.onFailedBranches === 'abort' && ended.result.runningNodes.length > 0 ? abortOnce(machine, phase.executionId) : [];
  return to({ ...machine, seenEnd }, { name: 'ending', executionId: phase.executionId, result: ended.result }, ...branches, emit);
}

function pollCompleted(machine: RunMachine): RunStep {
  const { phase, rules } = machine;
  if (phase.name === 'following') return to(machine, CLOSED, { type: 'complete' });
  if (phase.name !== 'finishing' && phase.name !== 'ending') return stay(machine);
  if (phase.result.endedBy === 'failed' && rules.failOnWorkflowError) return to(machine, CLOSED, { type: 'error', error: new WorkflowFailedError(phase.result) });
  return to(machine, CLOSED, { type: 'complete' });
}

// --- the execution endpoints as Observables ------------------------------------------------------
/*
 * The run layer's seam onto the execution endpoints: every call as a cold Observable (one request per
 * subscription, cancelled by unsubscribing), a run's start with its optional plan check, and the
 * abort sent in the background when a run is left.
 */

/**
 * The Observable `factory` makes, made anew at each subscription: RxJS's `defer` for a factory that
 * returns an Observable. A throw in `factory` reaches the subscriber as an error, as with `defer`.
 * Kept apart from `defer` because `defer` also converts Promises, iterables and streams, and that
 * conversion (with the helpers it needs) is most of what a browser app would load for it.
 */
export function lazy<T>(factory: () => Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => factory().subscribe(subscriber));
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && 'then' in value && typeof value.then === 'function';
}

/**
 * A call that takes an `AbortSignal` as a cold Observable, after rxjs `fromFetch`: each subscription
 * makes the call with its own signal, and unsubscribing before the answer aborts it. The run layer
 * puts its starts and aborts behind this seam (and the reads of an `ExecutionsApi` of the caller's
 * own); pipelines put downloads, uploads and a step's input there.
 * A call that answers at once (no Promise) emits synchronously, so pure inputs keep tests in virtual time.
 *
 * @example
 * ```ts
 * const status$ = fromAbortable((signal) => api.status('we-1', { signal }));
 * ```
 */
export function fromAbortable<T>(call: (signal: AbortSignal) => T | PromiseLike<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    let answer: T | PromiseLike<T>;
    try {
      answer = call(controller.signal);
    } catch (error: unknown) {
      subscriber.error(error);
      return undefined;
    }
    if (!isPromiseLike(answer)) {
      subscriber.next(answer);
      subscriber.complete();
      return undefined;
    }
    answer.then(
      (value) => {
        settled = true;
        subscriber.next(value);
        subscriber.complete();
      },
      (error: unknown) => {
        settled = true;
        subscriber.error(error);
      },
    );
    return () => {
      if (!settled) controller.abort();
    };
  });
}

/**
 * How a start goes: `sending` says whether a request of it is on its way (`true` from the moment an
 * attempt leaves: the execution may exist; `false` when that attempt failed and nothing is on its way,
 * see `StartOptions.onSending`), then `started` with the execution.
 */
export type StartProgress = { readonly type: 'sending'; readonly sending: boolean } | { readonly type: 'started'; readonly execution: StartedExecution };

/**
 * The execution endpoints as Observables: one request per subscription, cancelled by unsubscribing.
 * The run layer is written against this seam, so tests drive it with cold marble Observables in
 * virtual time.
 */
export interface ExecutionSource {
  /** Unsubscribing while nothing of the start is on its way takes it back: no execution exists. */
  start(canvasId: string, input?: { readonly variables?: Variables }, options?: TelemetryOptions): Observable<StartProgress>;
  /**
   * `urgent`: the read confirms an abort a person waits on, and goes ahead of the runs' reads
   * (`priority: 'interactive'`).
   */
  status(executionId: string, options?: ReadOptions): Observable<ExecutionSnapshot>;
  output(executionId: string, options?: ReadOptions): Observable<ExecutionOutput>;
  abort(executionId: string, options?: TelemetryOptions): Observable<void>;
  /** The workflow's plan, to check a run's variables against (`RunOptions.checkVariables`). */
  readonly plan?: (canvasId: string, options?: TelemetryOptions) => Observable<WorkflowPlan>;
}

/** The parent of a request's telemetry (`CallOptions.telemetryParent`): the run it is made for. */
export interface TelemetryOptions {
  readonly telemetryParent?: unknown;
}

/** How a run's read is placed in the request budget (see `ExecutionSource.status`). */
export interface ReadOptions extends TelemetryOptions {
  readonly urgent?: boolean | undefined;
}

function parentOf(options: TelemetryOptions | undefined): TelemetryOptions {
  return options?.telemetryParent === undefined ? {} : { telemetryParent: options.telemetryParent };
}

/**
 * `source` with every request it makes reported under `telemetryParent`: one run's view of the
 * client's source, so its requests' telemetry goes under the run's.
 */
function withTelemetryParent(source: ExecutionSource, telemetryParent: unknown): ExecutionSource {
  const { plan } = source;
  return {
    ...(plan === undefined ? {} : { plan: (canvasId: string) => plan(canvasId, { telemetryParent }) }),
    start: (canvasId, input) => source.start(canvasId, input, { telemetryParent }),
    status: (executionId, options) => source.status(executionId, { ...options, telemetryParent }),
    output: (executionId, options) => source.output(executionId, { ...options, telemetryParent }),
    abort: (executionId) => source.abort(executionId, { telemetryParent }),
  };
}

function placementOf(options: ReadOptions | undefined): (TelemetryOptions & { readonly priority?: 'interactive' }) | undefined {
  if (options === undefined) return undefined;
  return { ...(options.urgent === true ? { priority: 'interactive' as const } : {}), ...parentOf(options) };
}

/**
 * Puts an `ExecutionsApi` (Promises taking a signal) behind the Observable seam. The client's own
 * API reads without them: a run's reads are its request path's Observables (`executionReads`).
 */
export function observeExecutions(api: ExecutionsApi, plans?: { get(canvasId: string, options?: CallOptions): Promise<WorkflowPlan> }): ExecutionSource {
  const reads = executionReads(api);
  return {
    ...(plans === undefined ? {} : { plan: (canvasId: string, options?: TelemetryOptions) => fromAbortable((signal) => plans.get(canvasId, { signal, ...parentOf(options) })) }),
    start: (canvasId, input, options) =>
      new Observable<StartProgress>((subscriber) =>
        fromAbortable((signal) =>
          api
            .start(canvasId, input, {
              signal,
              ...parentOf(options),
              onSending: (sending) => {
                subscriber.next({ type: 'sending', sending });
              },
            })
            .then((execution): StartProgress => ({ type: 'started', execution })),
        ).subscribe(subscriber),
      ),
    status: (executionId, options) => reads?.status(executionId, placementOf(options)) ?? fromAbortable((signal) => api.status(executionId, { signal, ...placementOf(options) })),
    output: (executionId, options) => reads?.output(executionId, placementOf(options)) ?? fromAbortable((signal) => api.output(executionId, { signal, ...placementOf(options) })),
    abort: (executionId, options) => fromAbortable((signal) => api.abort(executionId, { signal, ...parentOf(options) })),
  };
}

/**
 * A run's start, for `RunTarget.start`: with `checkVariables`, the workflow's plan is read first and
 * the variables checked against it (`checkVariablesAgainstPlan`), so a run that would be wrong errors
 * with `InvalidArgumentError` and is never started. While the plan is read nothing of the start is on
 * its way, so leaving then sends no start. `onPlan` hears each plan read (its tasks are the run's task nodes).
 */
export function startExecution(
  source: ExecutionSource,
  canvasId: string,
  input: { readonly variables?: Variables },
  checkVariables: boolean,
  onPlan?: (plan: WorkflowPlan) => void,
): () => Observable<StartProgress> {
  if (!checkVariables) return () => source.start(canvasId, input);
  const { plan } = source;
  if (plan === undefined) throw new InvalidArgumentError('checkVariables', 'needs a client that can read plans');
  // The plan's one answer, then the start on the same subscriber: leaving while either is on its way
  // takes it back, and a plan the variables do not fit ends in the error, with no start sent. A plan
  // read that ends with no plan ends the start with nothing sent (as `switchMap` over it would).
  return () =>
    new Observable<StartProgress>((subscriber) => {
      let read = false;
      return plan(canvasId).subscribe({
        next: (found) => {
          read = true;
          onPlan?.(found);
          lazy(() => {
            checkVariablesAgainstPlan(found, input.variables ?? {});
            return source.start(canvasId, input);
          }).subscribe(subscriber);
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          if (!read) subscriber.complete();
        },
      });
    });
}

/** How a start or an abort goes through an outage (`RunSettings`' fields of the same names). */
type OutageOptions = Pick<RunSettings, 'outageMs' | 'scheduler' | 'random'>;

/**
 * `attempt` made again through an outage (poll.ts) with the same backoff as a read, for up to
 * `outageMs` from its first failure, while `mayRetry` allows the failure; any other failure, or the
 * last of an outage that lasted too long (`outlasted`), ends it. Unsubscribing takes back the attempt
 * on its way, or the wait for the next.
 */
function throughOutage<T>(attempt: () => Observable<T>, options: OutageOptions, mayRetry: (error: unknown) => boolean = () => true): Observable<T> {
  const { outageMs, scheduler, random } = options;
  return new Observable<T>((subscriber) => {
    let outage: Outage | undefined;
    let current: Subscription | undefined;
    let wait: Subscription | undefined;
    const send = (): void => {
      current = lazy(attempt).subscribe({
        next: (value) => {
          subscriber.next(value);
        },
        error: (error: unknown) => {
          const now = scheduler.now();
          const step = mayRetry(error) ? afterFailure(outage, error, now, random(), outageMs) : undefined;
          if (step?.kind !== 'retry') {
            subscriber.error(outlasted(error, step?.outage, now));
            return;
          }
          outage = step.outage;
          wait = scheduler.schedule(send, step.delayMs);
        },
        complete: () => {
          subscriber.complete();
        },
      });
    };
    send();
    return () => {
      wait?.unsubscribe();
      current?.unsubscribe();
    };
  });
}

/**
 * A start that the request budget refused to send because it could not reach its shared store
 * (`BUDGET_UNAVAILABLE` before anything of it left) is made again through the outage, with the same
 * backoff as a read, for up to `outageMs` from the first refusal: it never reached the service, so
 * making it again cannot start a second execution. Any other failure ends the start as before: it may
 * have reached the service (service.md §2.2), or it fails the same way again (a start whose connection
 * was refused was already made again by the retry policy, and a wrong address should say so soon).
 * Unsubscribing takes back the waiting start like any other.
 */
function waitOutUnsentStart(start: () => Observable<StartProgress>, options: OutageOptions): Observable<StartProgress> {
  return lazy(() => {
    // Whether a request of the attempt on its way left.
    let sent = false;
    const attempt = (): Observable<StartProgress> => {
      sent = false;
      return start().pipe(
        tap((progress) => {
          if (progress.type === 'sending' && progress.sending) sent = true;
        }),
      );
    };
    return throughOutage(attempt, options, (error) => !sent && isBudgetUnavailable(error));
  });
}

/** What `abortInBackground` logs, with the `executionId` and the `error`, when it finally could not send an abort. */
export const ABORT_FAILED_LOG = 'Could not abort the execution';

/**
 * Sends the abort of an execution in the background: it is not part of the subscription that asked
 * for it (that one is being torn down) and it never throws into the caller. It has no deadline of its
 * own: an execution left running spends credits, and the request budget may rightly hold an abort
 * longer than any fixed deadline (a 429's pause, a mass abort draining at the service's limit). Every
 * wait on its way is bounded instead: the budget's pause by the service's window, each attempt by the
 * request timeout, the attempts by the retry policy (abort is repeatable, `decideRetry` in http/transport.ts). An
 * outage (poll.ts) outlasting those attempts is waited out: the abort is sent again with backoff,
 * through the budget, for up to `outageMs` from its first failure, and stops at the first that
 * answers. Aborting a finished execution is harmless (service.md §3.5), so a final failure is logged,
 * with the execution's id, not thrown. `settled` hears when the abort answered (`undefined`) or
 * finally failed (the error logged).
 */
export function abortInBackground(
  source: Pick<ExecutionSource, 'abort'>,
  executionId: string,
  options: OutageOptions & Pick<RunSettings, 'logger'>,
  settled?: (givenUp: { readonly error: unknown } | undefined) => void,
): void {
  throughOutage(() => source.abort(executionId), options).subscribe({
    error: (failure: unknown) => {
      options.logger?.warn(ABORT_FAILED_LOG, { executionId, error: failure });
      settled?.({ error: failure });
    },
    complete: () => {
      settled?.(undefined);
    },
  });
}

/**
 * Checks a run's variables against the workflow's plan (service.md §5.2) before anything is sent, since
 * the service checks none of it (§5.4) and a wrong run still costs credits. The rule is the plan's
 * schema (`planSchema`): a name the plan does not have (with the nearest one it does, "did you mean"),
 * a required variable left out or blank, a value outside a variable's `options`, text that is not a
 * string, a file that is not a file key. Throws `InvalidArgumentError` naming the variable — an unknown
 * name first, then the plan's variables in order.
 *
 * @example
 * ```ts
 * checkVariablesAgainstPlan(await client.workflows.get('c-1'), { topik: 'tides' });
 * // InvalidArgumentError: variables.topik: is not a variable of this workflow: did you mean `topic`?
 * ```
 */
export function checkVariablesAgainstPlan(plan: { readonly variables: readonly PlanVariable[] }, variables: Variables): void {
  const checked = planSchema(plan).safeParse(variables);
  if (checked.success) return;
  const { issues } = checked.error;
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  const [name] = unknown?.keys ?? [];
  if (name !== undefined) {
    throw new InvalidArgumentError(`variables.${name}`, unknownVariableProblem(name, plan.variables.map((variable) => variable.name)));
  }
  const [first] = issues;
  const variable = first?.path[0];
  throw new InvalidArgumentError(variable === undefined ? 'variables' : `variables.${String(variable)}`, first?.message ?? 'do not fit the workflow\'s plan');
}
