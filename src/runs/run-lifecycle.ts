import { asyncScheduler, Observable, type Observer, type SchedulerLike, Subscription, tap, timer } from 'rxjs';
import type { ReadNeed } from '../domain/budget.js';
import type { DurationModel } from '../domain/durations.js';
import type { Logger, WorkflowPlan } from '../domain/model.js';
import { DEFAULTS } from '../domain/options.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { timerDelay } from '../http/options.js';
import { abortInBackground, type ExecutionSource, type StartProgress, waitOutUnsentStart, withTelemetryParent } from './execution-source.js';
import { withExecutionId } from './execution-error.js';
import { type CadenceBounds, cadenceBounds, OUTPUT_MODES, type OutputMode, pollExecution, type PollInterval, type PollRead, ReadNow, reducerShell } from './poll.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { RunHub } from './run-hub.js';
import { initialRun, type LifecycleCommand, type LifecycleEvent, reduceRun, type RunControl, type RunRules } from './run-machine.js';
import { RunReader, withReading } from './run-state.js';
import type { RunEvent } from './events.js';

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
  /** Where runs with an `idempotencyKey` keep it (`ClientOptions.idempotency`). None: a store in memory, made at the first such run. */
  readonly idempotency?: IdempotencyStore;
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
 * that cannot be meant (a negative `timeoutMs`, an `output` that is neither mode, a run's
 * `idempotencyTtlMs` without an `idempotencyKey`) is an `InvalidArgumentError`, not a guess. A key is
 * checked by the run that uses it (idempotent-run.ts): a run without one never loads that code.
 */
export function runSettings(kind: 'run' | 'watch', options: RunOptions = {}, defaults: RunsDefaults = {}): RunSettings {
  const { timeoutMs, output = 'stream' } = options;
  if (timeoutMs !== undefined) timerDelay('timeoutMs', timeoutMs);
  // Typed as a mode, but a JavaScript caller can pass anything.
  const given: unknown = output;
  if (!OUTPUT_MODES.includes(given)) throw new InvalidArgumentError('output', `must be 'stream' or 'final' (got ${String(given)})`);
  const settings: RunSettings = {
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
  if (kind === 'run' && options.idempotencyKey === undefined && options.idempotencyTtlMs !== undefined) throw new InvalidArgumentError('idempotencyTtlMs', 'needs an idempotencyKey');
  return settings;
}

// --- a run's lifecycle ---------------------------------------------------------------------------

/** Where a run's execution comes from: a start of its own, or an existing one to follow. */
export type RunTarget =
  | {
      readonly kind: 'start';
      readonly canvasId: string;
      /** The start request, made per subscription; unsubscribing takes it back while nothing of it is on its way. */
      readonly start: () => Observable<StartProgress>;
      /** The workflow's task nodes, once the start read its plan (`checkVariables`; see {@link notingPlan}). */
      readonly plannedTasks?: () => readonly { readonly nodeId: string }[] | undefined;
    }
  /** `canvasId`, when known (a run following the execution its idempotency key started), goes on its `started` event and result. */
  | { readonly kind: 'watch'; readonly executionId: string; readonly canvasId?: string | undefined };

/**
 * `source` with its plan reads noted: a start that checks its variables reads the workflow's plan
 * first, whose tasks are the run's task nodes (service.md §5.2), so its progress has its total from
 * the start. `tasks` is per start: make one for each.
 */
export function notingPlan(source: ExecutionSource): { readonly source: ExecutionSource; readonly tasks: () => readonly { readonly nodeId: string }[] | undefined } {
  const { plan } = source;
  if (plan === undefined) return { source, tasks: () => undefined };
  let tasks: readonly { readonly nodeId: string }[] | undefined;
  const noting = (canvasId: string): Observable<WorkflowPlan> =>
    plan(canvasId).pipe(
      tap((found) => {
        tasks = found.tasks.map((task) => ({ nodeId: task.id }));
      }),
    );
  return { source: { ...source, plan: noting }, tasks: () => tasks };
}

/**
 * One subscription to a run: the shell of `reduceRun` (run-machine.ts, where the rules are). It turns
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
          following = pollExecution(source, {
            // Field by field, not `...settings`: a literal with a spread in it gets a shape of its own
            // and its fields out of the object, held by every watched run.
            executionId: command.executionId,
            canvasId: command.canvasId,
            startedStatus: command.startedStatus,
            bounds: settings.bounds,
            output: settings.output,
            scheduler: settings.scheduler,
            random: settings.random,
            durations: settings.durations,
            needRead: settings.needRead,
            logger: settings.logger,
            readNow,
            onFailedBranches: settings.onFailedBranches,
            outageMs: settings.outageMs,
          }).subscribe(new PollHeard(dispatch));
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
            // A subscriber that left before `finished` left a run not over (run-machine.ts, `ending`).
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

    const { signal, timeoutMs } = settings;
    if (signal?.aborted === true) dispatch({ type: 'signal', reason: signal.reason });
    else if (signal !== undefined) {
      const onAbort = (): void => {
        dispatch({ type: 'signal', reason: signal.reason });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      listen(() => {
        signal.removeEventListener('abort', onAbort);
      });
    }
    if (timeoutMs !== undefined) {
      listen(
        timer(timeoutMs, settings.scheduler).subscribe(() => {
          dispatch({ type: 'deadline' });
        }),
      );
    }
    dispatch({ type: 'subscribe' });
    const { detach } = settings;
    if (detach?.aborted === true) dispatch({ type: 'control', control: 'detach' });
    else if (detach !== undefined) {
      const onDetach = (): void => {
        dispatch({ type: 'control', control: 'detach' });
      };
      detach.addEventListener('abort', onDetach, { once: true });
      listen(() => {
        detach.removeEventListener('abort', onDetach);
      });
    }
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
  return new Observable<RunEvent>((subscriber) => {
    const observer = hook.run({ ...start, at: scheduler.now() });
    let ended = false;
    const end = (outcome: RunTelemetryEnd['outcome'], error?: unknown): void => {
      if (ended) return;
      ended = true;
      observer.end({ at: scheduler.now(), outcome, ...(outcome === 'error' ? { error } : {}) });
    };
    const traced = observer.parent === undefined ? source : withTelemetryParent(source, observer.parent);
    const subscription = follow(traced).subscribe({
      next: (event) => {
        observer.event(event, scheduler.now());
        subscriber.next(event);
      },
      error: (error: unknown) => {
        end('error', error);
        subscriber.error(error);
      },
      complete: () => {
        end('completed');
        subscriber.complete();
      },
    });
    return () => {
      subscription.unsubscribe();
      end('unsubscribed');
    };
  });
}
