import { defer, type Observable } from 'rxjs';
import type { ExecutionsApi } from '../http/calls.js';
import type { Variables } from '../domain/model.js';
import type { CanvasId, WorkflowArguments } from '../domain/workflows.js';
import { objectArgument } from '../errors/validation-errors.js';
import type { RunEvent } from './events.js';
import { cadenceBounds } from './poll.js';
import { type ExecutionSource, observeExecutions, startExecution } from './execution-source.js';
import { type RunHandle, startRunOver, type StartRunOptions } from './run-handle.js';
import { notingPlan, observedRun, outageMs, type RunOptions, type RunsDefaults, runLifecycle, runSettings } from './run-lifecycle.js';
import { sharedWatch } from './shared-watch.js';
import { createMemoryIdempotencyStore, type IdempotencyStore, idempotencyStoreOption } from './idempotency-store.js';
import { idempotentRun, runIdempotency } from './idempotent-run.js';

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
   * run.state.subscribe((state) => render(state.progress));
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
export function runsOver(source: ExecutionSource, defaults: RunsDefaults = {}): Runs & RunHandles {
  // The client's `polling` and `outageMs` are checked once, here, so a bad one fails `createClient`, not every run.
  cadenceBounds(undefined, defaults.polling);
  if (defaults.outageMs !== undefined) outageMs(defaults.outageMs);
  let idempotency = defaults.idempotency === undefined ? undefined : idempotencyStoreOption(defaults.idempotency);
  const idempotencyStore = (): IdempotencyStore => (idempotency ??= createMemoryIdempotencyStore(defaults.scheduler === undefined ? {} : { scheduler: defaults.scheduler }));
  return {
    run: (canvasId: string, input?: RunInput, options?: RunOptions) =>
      defer(() => {
        const given = objectArgument('input', input);
        const settings = objectArgument('options', options);
        const resolved = runSettings('run', settings, defaults);
        const keyed = settings.idempotencyKey === undefined ? undefined : runIdempotency(settings.idempotencyKey, settings, idempotencyStore, defaults.logger);
        const parent = settings.telemetryParent === undefined ? {} : { parent: settings.telemetryParent };
        return observedRun(defaults.telemetry, source, { kind: 'run', canvasId, ...parent }, resolved.scheduler, (traced) => {
          const planned = notingPlan(traced);
          const start = startExecution(planned.source, canvasId, given, settings.checkVariables === true);
          const owned = (claimed: typeof start): Observable<RunEvent> => {
            const run = runLifecycle(traced, { kind: 'start', canvasId, start: claimed, plannedTasks: planned.tasks }, resolved);
            return defaults.hub === undefined ? run : defaults.hub.lead(run);
          };
          if (keyed === undefined) return owned(start);
          // A follower never aborts the execution it did not start (`RunOptions.idempotencyKey`).
          const followed = { ...resolved, abortOnUnsubscribe: false };
          return idempotentRun(keyed, start, owned, (executionId) =>
            defaults.hub === undefined
              ? runLifecycle(traced, { kind: 'watch', executionId, canvasId }, followed)
              : sharedWatch(traced, defaults.hub, executionId, followed, canvasId),
          );
        });
      }),
    watch: (executionId, options) =>
      defer(() => {
        const given = objectArgument('options', options);
        const settings = runSettings('watch', given, defaults);
        const target = { kind: 'watch', executionId } as const;
        const parent = given.telemetryParent === undefined ? {} : { parent: given.telemetryParent };
        return observedRun(defaults.telemetry, source, { kind: 'watch', executionId, ...parent }, settings.scheduler, (traced) =>
          defaults.hub === undefined ? runLifecycle(traced, target, settings) : sharedWatch(traced, defaults.hub, executionId, settings),
        );
      }),
    startRun: (canvasId: string, input?: RunInput, options?: StartRunOptions) =>
      startRunOver(source, canvasId, objectArgument('input', input), objectArgument('options', options), defaults, idempotencyStore),
  };
}

/**
 * Reactive runs over the execution endpoints. The client passes its `polling` defaults and `logger`;
 * every request goes through `api`, so the request budget sees them all.
 */
export function createRuns(api: ExecutionsApi, defaults: RunsDefaults = {}, plans?: Parameters<typeof observeExecutions>[1]): Runs & RunHandles {
  return runsOver(observeExecutions(api, plans), defaults);
}
