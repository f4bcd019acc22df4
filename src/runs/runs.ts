import { type Observable, ReplaySubject, Subscription, tap } from 'rxjs';
import type { RunResult, Variables } from '../domain/model.js';
import type { CanvasId, WorkflowArguments } from '../domain/workflows.js';
import { objectArgument, pathSegment, timerDelay } from '../errors/validation-errors.js';
import type { ExecutionsApi } from '../http/calls.js';
import type { RunEvent } from './events.js';
import { createMemoryIdempotencyStore, type IdempotencyStore, idempotencyStoreOption, idempotentRun, type RunIdempotency, runIdempotency } from './idempotency.js';
import { cadenceBounds } from './poll.js';
import { abortInBackground, checkOutageMs, type ExecutionSource, lazy, observedRun, observeExecutions, type RunControl, runLifecycle, type RunOptions, type RunsDefaults, type RunSettings, runSettings, startExecution } from './run-lifecycle.js';
import { INITIAL_RUN_STATE, type RunState, sampleRunState, toRunState } from './run-state.js';
import { sharedWatch, shareOnce } from './run-hub.js';

/*
 * Runs as the client offers them: `run` and `watch`, cold Observables of a run's events, and
 * `startRun`, a run started at once and held by its handle.
 */

/** The input of a run (service.md §5.4: always sent as the `variables` wrapper). */
export interface RunInput {
  readonly variables?: Variables;
}

/** Reactive runs: `client.run` and `client.watch`. */
export interface Runs {
  /**
   * Starts a new execution of a workflow per subscription and follows it to the end. Unsubscribing
   * before `finished` aborts it (see `RunOptions.abortOnUnsubscribe`).
   *
   * @example
   * ```ts
   * runs.run('c-123', { variables: { topic: 'tides' } }).pipe(ofType('message'))
   *   .subscribe((event) => process.stdout.write(event.delta));
   * ```
   */
  run<Id extends CanvasId>(canvasId: Id, ...rest: WorkflowArguments<Id, RunOptions>): Observable<RunEvent>;
  /**
   * Follows an existing execution (from any client of the account, service.md §3.8). `started` comes
   * with the first status read. Unsubscribing leaves the execution running unless
   * `abortOnUnsubscribe: true`. Watches of one execution in a client (in its `hub`) share one poll: a
   * later one first gets a `snapshot` event of the state so far, and `abortOnUnsubscribe` aborts only
   * when the last one following the execution leaves.
   *
   * @example
   * ```ts
   * const result = await runResult(runs.watch('we-abc'));
   * ```
   */
  watch(executionId: string, options?: RunOptions): Observable<RunEvent>;
}

/** Aborts sent as a run's own: `client.abortThroughOutage`. */
export interface RunAborts {
  /**
   * Aborts an execution the way a run that is left does: through an outage of the service (or of the
   * request budget's store) the abort is sent again with backoff, for up to the client's `outageMs`,
   * until the service takes it — whether or not anyone still waits on the Promise. Resolves once the
   * service took it; rejects with the last error when the outage outlasted `outageMs` (then also logged
   * through the client's `logger`, as `Could not abort the execution`), a rejection no one has to
   * catch. `executions.abort` is one call.
   *
   * @example
   * ```ts
   * await client.abortThroughOutage('we-abc');
   * ```
   */
  abortThroughOutage(executionId: string): Promise<void>;
}

/**
 * Runs as handles, for apps and UIs: `client.startRun`.
 *
 * @example
 * ```ts
 * const runs: RunHandles = client;
 * const run = runs.startRun('c-123');
 * ```
 */
export interface RunHandles {
  /**
   * Starts a new execution now and returns its handle: the execution id, the events and states
   * (shared: a late subscriber starts from the state so far), the result, `cancel()` and `detach()`. The run is followed
   * once, whatever the number of subscribers, until it ends — unsubscribing never aborts it.
   *
   * @example
   * ```ts
   * const run = runs.startRun('c-123', { variables: { topic: 'tides' } }, { timeoutMs: 30 * 60_000 });
   * run.state.subscribe({ next: (state) => render(state.progress), error: (error) => showFailure(error) });
   * stopButton.onclick = () => void run.cancel();
   * const { endedBy, files } = await run.result;
   * ```
   */
  startRun<Id extends CanvasId>(canvasId: Id, ...rest: WorkflowArguments<Id, StartRunOptions>): RunHandle;
}

/**
 * Runs over the Observable seam; `createRuns` puts an `ExecutionsApi` behind it. Nothing happens
 * until a subscription, except for `startRun`, which starts at once.
 */
export function runsOver(source: ExecutionSource, defaults: RunsDefaults = {}): Runs & RunHandles & RunAborts {
  // The client's `polling` and `outageMs` are checked once, here, so a bad one fails `createClient`, not every run.
  cadenceBounds(undefined, defaults.polling);
  if (defaults.outageMs !== undefined) checkOutageMs(defaults.outageMs);
  let idempotency = defaults.idempotency === undefined ? undefined : idempotencyStoreOption(defaults.idempotency);
  const idempotencyStore = (): IdempotencyStore => (idempotency ??= createMemoryIdempotencyStore(defaults.scheduler === undefined ? {} : { scheduler: defaults.scheduler }));
  return {
    run: (canvasId: string, input?: RunInput, options?: RunOptions) =>
      lazy(() => {
        const given = objectArgument('input', input);
        const settings = objectArgument('options', options);
        const resolved = runSettings('run', settings, defaults);
        const keyed = settings.idempotencyKey === undefined ? undefined : runIdempotency(settings.idempotencyKey, settings, idempotencyStore, defaults.logger);
        return startedRun(source, defaults, canvasId, given, settings, resolved, keyed, (traced, executionId) => {
          // A follower never aborts the execution it did not start (`RunOptions.idempotencyKey`).
          const followed = { ...resolved, abortOnUnsubscribe: false };
          return sharedWatch(traced, defaults.hub, executionId, followed, canvasId);
        });
      }),
    watch: (executionId, options) =>
      lazy(() => {
        const given = objectArgument('options', options);
        const settings = runSettings('watch', given, defaults);
        return observedRun(defaults.telemetry, source, { kind: 'watch', executionId, parent: given.telemetryParent }, settings.scheduler, (traced) => sharedWatch(traced, defaults.hub, executionId, settings));
      }),
    abortThroughOutage: (executionId) => {
      // A wrong id is the caller's mistake, said at once: not retried, not logged as an abort that failed.
      try {
        pathSegment('executionId', executionId);
      } catch (error: unknown) {
        if (error instanceof Error) return Promise.reject(error);
        throw error;
      }
      const landed = deferred<undefined>();
      abortInBackground(source, executionId, runSettings('watch', {}, defaults), (givenUp) => {
        if (givenUp === undefined) landed.resolve(undefined);
        else landed.reject(givenUp.error);
      });
      return landed.promise;
    },
    startRun: (canvasId: string, input?: RunInput, options?: StartRunOptions) =>
      startRunOver(source, canvasId, objectArgument('input', input), objectArgument('options', options), defaults, idempotencyStore),
  };
}

/**
 * A run that starts its own execution, under the client's telemetry, offered to its hub. With an
 * idempotency key (`keyed`), the key is claimed first, and a run that finds it taken follows the
 * execution started with it (`follow`) instead of starting one.
 */
function startedRun(
  source: ExecutionSource,
  defaults: RunsDefaults,
  canvasId: string,
  input: RunInput,
  options: RunOptions,
  settings: RunSettings,
  keyed: RunIdempotency | undefined,
  follow: (traced: ExecutionSource, executionId: string) => Observable<RunEvent>,
  control?: Observable<RunControl>,
): Observable<RunEvent> {
  return observedRun(defaults.telemetry, source, { kind: 'run', canvasId, parent: options.telemetryParent }, settings.scheduler, (traced) => {
    // The workflow's tasks, once a start that checks its variables read its plan: the run's task nodes
    // (service.md §5.2), so its progress has its total from the start.
    let tasks: readonly { readonly nodeId: string }[] | undefined;
    const start = startExecution(traced, canvasId, input, options.checkVariables === true, (plan) => {
      tasks = plan.tasks.map((task) => ({ nodeId: task.id }));
    });
    const owned = (claimed: typeof start): Observable<RunEvent> => {
      const run = runLifecycle(traced, { kind: 'start', canvasId, start: claimed, plannedTasks: () => tasks }, settings, control);
      // Offered to the hub: a watch of this execution in the same hub joins it instead of polling again.
      return defaults.hub === undefined ? run : defaults.hub.lead(run);
    };
    return keyed === undefined ? owned(start) : idempotentRun(keyed, start, owned, (executionId) => follow(traced, executionId));
  });
}

/**
 * Reactive runs over the execution endpoints. The client passes its `polling` defaults and `logger`;
 * every request goes through `api`, so the request budget sees them all.
 */
export function createRuns(api: ExecutionsApi, defaults: RunsDefaults = {}, plans?: Parameters<typeof observeExecutions>[1]): Runs & RunHandles & RunAborts {
  return runsOver(observeExecutions(api, plans), defaults);
}

// --- a run's handle ------------------------------------------------------------------------------
/**
 * Options of `client.startRun`: those of a run, but for a handle `timeoutMs` and `signal` stop the
 * execution as `cancel()` does (it is aborted and followed to its end, `endedBy: 'timeout'` or
 * `'aborted'`) instead of erroring, and there is no `abortOnUnsubscribe`: a handle's subscribers come
 * and go without touching the execution; `cancel()` and `detach()` decide.
 *
 * @example
 * ```ts
 * client.startRun('c-1', { variables: { topic: 'tides' } }, { timeoutMs: 30 * 60_000, sampleStateMs: 5_000 });
 * ```
 */
export interface StartRunOptions extends Omit<RunOptions, 'abortOnUnsubscribe'> {
  /** `state` emits at most one state per period, always the final one (see `sampleRunState`). Default: every read's. */
  readonly sampleStateMs?: number;
}

/**
 * A run already started, for apps and UIs: the run is followed once, whatever the number of
 * subscribers, from `startRun` until it ends, `cancel()` or `detach()`.
 *
 * @example
 * ```ts
 * const run = client.startRun('c-1', { variables: { question } }, { timeoutMs: 30 * 60_000 });
 * run.state.pipe(sampleRunState(5_000)).subscribe(updateCard);
 * onCancelButton(() => run.cancel());
 * const result = await run.result;
 * if (result.endedBy === 'finish') await send(result.files);
 * ```
 */
export interface RunHandle {
  /**
   * The execution's id, once the start answered. Rejects when the run ended without one: with the
   * start's error, or an `AbortError` when `cancel()` dropped the start before it was sent.
   */
  readonly executionId: Promise<string>;
  /**
   * The run's events; a late subscriber first gets the state so far as one `snapshot` event (see `shareRun`), then the rest.
   * Errors as `result` rejects (a failed workflow by default, a request that could not be made): give it an `error` callback.
   */
  readonly events: Observable<RunEvent>;
  /**
   * One state per read (see `toRunState`), sampled with `sampleStateMs`; a late subscriber gets the latest at once.
   * Errors as `result` rejects (a failed workflow by default, a request that could not be made): give it an
   * `error` callback, or in Node the error is uncaught and ends the process.
   */
  readonly state: Observable<RunState>;
  /**
   * The result, once the execution ended: `endedBy` says how (`finish`, `aborted` after `cancel()`,
   * `timeout` after `timeoutMs`, `failed` with `failOnWorkflowError: false`). Rejects as a run errors
   * (`WorkflowFailedError` for a failed workflow by default, the typed error of a request that could not
   * be made), or with an `AbortError` after `detach()`. Never read, it never reports an unhandled rejection.
   */
  readonly result: Promise<RunResult>;
  /**
   * Aborts the execution — or drops its start when nothing of it was sent yet — and resolves with the
   * final result (`endedBy: 'aborted'`, read once the service shows the abort; with `executionId: ''`
   * when no execution was ever made). After the run ended it only returns `result`, and aborts an
   * execution left running by an error, `detach()`, or a failure while other branches still ran
   * (`result.runningNodes`; the service goes on running them, spending credits).
   */
  cancel(): Promise<RunResult>;
  /**
   * Stops following the run and leaves the execution running (nothing is aborted; a start on its way
   * still goes through, so `executionId` resolves). `events` and `state` complete; `result` rejects.
   */
  detach(): void;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** A promise settled from outside, marked handled: an app that never reads it hears no unhandled rejection. */
function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((settle, fail) => {
    resolve = settle;
    reject = fail;
  });
  // The handler goes on a copy: `promise` itself still rejects for whoever awaits it.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Starts a run at once (hot) and returns its handle; see `RunHandle`. Options are checked here, so a
 * bad one throws before anything is sent.
 */
function startRunOver(
  source: ExecutionSource,
  canvasId: string,
  input: { readonly variables?: Variables },
  options: StartRunOptions,
  defaults: RunsDefaults,
  idempotencyStore: () => IdempotencyStore,
): RunHandle {
  const settings = runSettings('run', options, defaults);
  const { sampleStateMs } = options;
  if (sampleStateMs !== undefined) timerDelay('sampleStateMs', sampleStateMs);
  const { scheduler, timeoutMs, signal } = settings;

  // The handle's own `timeoutMs` and `signal` steer the run (below); the lifecycle never ends it on its own.
  // Replayed: with an idempotency key the lifecycle comes after the key's claim, and hears a `cancel()` made meanwhile.
  const control = new ReplaySubject<RunControl>();
  // The handle's `signal` cancels (below), rather than ending a wait for the key's claim.
  const keyed = options.idempotencyKey === undefined ? undefined : runIdempotency(options.idempotencyKey, { ...options, signal: undefined }, idempotencyStore, defaults.logger);
  const steered = { ...settings, timeoutMs: undefined, signal: undefined, abortOnUnsubscribe: false };
  const run$ = startedRun(source, defaults, canvasId, input, options, steered, keyed, (traced, id) => runLifecycle(traced, { kind: 'watch', executionId: id, canvasId }, steered, control), control);

  const executionId = deferred<string>();
  const result = deferred<RunResult>();
  // The execution, once started, and its end, once `finished` came.
  let started: string | undefined;
  let finished: RunResult | undefined;
  let ended: { readonly error: unknown } | 'completed' | undefined;
  let detached = false;
  let leftRunning: 'abort' | 'aborted' | undefined;

  const events = shareOnce(run$);

  const steering = new Subscription();
  /**
   * An execution left running (an error, `detach()`, or a failure whose other branches run on,
   * service.md §3.3, unless `onFailedBranches: 'abort'` already aborted them) is aborted when
   * `cancel()` asks for it, once.
   */
  const abortLeftRunning = (): void => {
    if (leftRunning !== 'abort' || started === undefined) return;
    if (finished !== undefined && (finished.runningNodes.length === 0 || settings.onFailedBranches === 'abort')) return;
    leftRunning = 'aborted';
    abortInBackground(source, started, settings);
  };
  const finish = (ending: { readonly error: unknown } | 'completed'): void => {
    ended = ending;
    steering.unsubscribe();
    if (ending !== 'completed') {
      executionId.reject(ending.error);
      result.reject(ending.error);
    } else {
      executionId.reject(new DOMException('No execution: the run was cancelled before its start was sent', 'AbortError'));
      if (finished === undefined) result.reject(new DOMException('The run handle was detached: the execution goes on unobserved', 'AbortError'));
      else result.resolve(finished);
    }
    abortLeftRunning();
  };

  const states = new ReplaySubject<RunState>(1);
  // The latest state, and whether the run is being stopped (`RunState.cancelling`) until its result.
  let latest: RunState | undefined;
  let cancelling = false;
  const show = (state: RunState): void => {
    latest = state;
    states.next(cancelling && state.result === undefined ? { ...state, cancelling: true } : state);
  };
  /** Shown at once, before any state if need be: the display says "cancelling…" from the call on. */
  const stopping = (): void => {
    if (cancelling) return;
    cancelling = true;
    show(latest ?? INITIAL_RUN_STATE);
  };
  events
    .pipe(
      tap((event) => {
        if (event.type === 'started') {
          started = event.executionId;
          executionId.resolve(started);
        } else if (event.type === 'finished') finished = event.result;
      }),
      toRunState(defaults.scheduler === undefined ? {} : { scheduler: defaults.scheduler }),
    )
    .subscribe({
      next: show,
      error: (error: unknown) => {
        finish({ error });
        states.error(error);
      },
      complete: () => {
        finish('completed');
        states.complete();
      },
    });

  const cancel = (): Promise<RunResult> => {
    if (ended === undefined && !detached) {
      stopping();
      control.next('cancel');
    }
    else {
      leftRunning ??= 'abort';
      if (ended !== undefined) abortLeftRunning();
    }
    return result.promise;
  };

  if (ended === undefined) {
    if (timeoutMs !== undefined) {
      steering.add(
        scheduler.schedule(() => {
          stopping();
          control.next('timeout');
        }, timeoutMs),
      );
    }
    if (signal !== undefined) {
      const onAbort = (): void => {
        void cancel();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      steering.add(() => {
        signal.removeEventListener('abort', onAbort);
      });
      if (signal.aborted) onAbort();
    }
  }

  return {
    executionId: executionId.promise,
    events,
    state: sampleStateMs === undefined ? states.asObservable() : states.pipe(sampleRunState(sampleStateMs, scheduler)),
    result: result.promise,
    cancel,
    detach: () => {
      if (ended !== undefined || detached) return;
      detached = true;
      steering.unsubscribe();
      control.next('detach');
    },
  };
}
