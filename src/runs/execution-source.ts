import { asyncScheduler, defer, map, Observable, type SchedulerLike, type Subscription, switchMap, timer } from 'rxjs';
import type { ExecutionOutput, ExecutionSnapshot, Logger, StartedExecution, Variables, WorkflowPlan } from '../domain/model.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { CallOptions, ExecutionsApi } from '../http/calls.js';
import { executionReads, type ReadPlacement } from '../http/resources.js';
import { afterFailure, isBudgetUnavailable, type Outage, outlasted } from './poll.js';
import { checkVariablesAgainstPlan } from './variables-against-plan.js';

/*
 * The run layer's seam onto the execution endpoints: every call as a cold Observable (one request per
 * subscription, cancelled by unsubscribing), a run's start with its optional plan check, and the
 * abort sent in the background when a run is left.
 */

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

function readCallOptions(signal: AbortSignal, options: ReadOptions | undefined): CallOptions {
  return { signal, ...(options?.urgent === true ? { priority: 'interactive' as const } : {}), ...parentOf(options) };
}

function parentOf(options: TelemetryOptions | undefined): TelemetryOptions {
  return options?.telemetryParent === undefined ? {} : { telemetryParent: options.telemetryParent };
}

/**
 * `source` with every request it makes reported under `telemetryParent`: one run's view of the
 * client's source, so its requests' telemetry goes under the run's.
 */
export function withTelemetryParent(source: ExecutionSource, telemetryParent: unknown): ExecutionSource {
  const { plan } = source;
  return {
    ...(plan === undefined ? {} : { plan: (canvasId: string) => plan(canvasId, { telemetryParent }) }),
    start: (canvasId, input) => source.start(canvasId, input, { telemetryParent }),
    status: (executionId, options) => source.status(executionId, { ...options, telemetryParent }),
    output: (executionId, options) => source.output(executionId, { ...options, telemetryParent }),
    abort: (executionId) => source.abort(executionId, { telemetryParent }),
  };
}

function placementOf(options: ReadOptions | undefined): ReadPlacement | undefined {
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
          api.start(canvasId, input, {
            signal,
            ...parentOf(options),
            onSending: (sending) => {
              subscriber.next({ type: 'sending', sending });
            },
          }),
        )
          .pipe(map((execution): StartProgress => ({ type: 'started', execution })))
          .subscribe(subscriber),
      ),
    status: (executionId, options) => reads?.status(executionId, placementOf(options)) ?? fromAbortable((signal) => api.status(executionId, readCallOptions(signal, options))),
    output: (executionId, options) => reads?.output(executionId, placementOf(options)) ?? fromAbortable((signal) => api.output(executionId, readCallOptions(signal, options))),
    abort: (executionId, options) => fromAbortable((signal) => api.abort(executionId, { signal, ...parentOf(options) })),
  };
}

/**
 * A run's start, for `RunTarget.start`: with `checkVariables`, the workflow's plan is read first and
 * the variables checked against it (`checkVariablesAgainstPlan`), so a run that would be wrong errors
 * with `InvalidArgumentError` and is never started. While the plan is read nothing of the start is on
 * its way, so leaving then sends no start.
 */
export function startExecution(
  source: ExecutionSource,
  canvasId: string,
  input: { readonly variables?: Variables },
  checkVariables: boolean,
): () => Observable<StartProgress> {
  if (!checkVariables) return () => source.start(canvasId, input);
  const { plan } = source;
  if (plan === undefined) throw new InvalidArgumentError('checkVariables', 'needs a client that can read plans');
  return () =>
    plan(canvasId).pipe(
      map((found) => {
        checkVariablesAgainstPlan(found, input.variables ?? {});
      }),
      switchMap(() => source.start(canvasId, input)),
    );
}

/** How a start waits out an outage of the request budget (`RunSettings`' fields of the same names). */
export interface UnsentStartOptions {
  readonly outageMs: number;
  readonly scheduler: SchedulerLike;
  readonly random: () => number;
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
export function waitOutUnsentStart(start: () => Observable<StartProgress>, options: UnsentStartOptions): Observable<StartProgress> {
  const { outageMs, scheduler, random } = options;
  return new Observable<StartProgress>((subscriber) => {
    let outage: Outage | undefined;
    let attempt: Subscription | undefined;
    let wait: Subscription | undefined;
    const send = (): void => {
      let sent = false;
      attempt = defer(start).subscribe({
        next: (progress) => {
          if (progress.type === 'sending' && progress.sending) sent = true;
          subscriber.next(progress);
        },
        error: (error: unknown) => {
          const now = scheduler.now();
          const step = sent || !isBudgetUnavailable(error) ? undefined : afterFailure(outage, error, now, random(), outageMs);
          if (step?.kind !== 'retry') {
            subscriber.error(step?.outage === undefined ? error : outlasted(error, step.outage, now));
            return;
          }
          outage = step.outage;
          wait = timer(step.delayMs, scheduler).subscribe(send);
        },
        complete: () => {
          subscriber.complete();
        },
      });
    };
    send();
    return () => {
      wait?.unsubscribe();
      attempt?.unsubscribe();
    };
  });
}

export interface BackgroundAbortOptions {
  readonly logger?: Logger | undefined;
  /** How long the abort is sent again through an outage of the service or of the budget (`RunOptions.outageMs`). Default 0: once. */
  readonly outageMs?: number | undefined;
  /** The clock of the waits between attempts. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
  /** The jitter of those waits, in [0, 1). Default `Math.random`. */
  readonly random?: (() => number) | undefined;
}

/**
 * Sends the abort of an execution in the background: it is not part of the subscription that asked
 * for it (that one is being torn down) and it never throws into the caller. It has no deadline of its
 * own: an execution left running spends credits, and the request budget may rightly hold an abort
 * longer than any fixed deadline (a 429's pause, a mass abort draining at the service's limit). Every
 * wait on its way is bounded instead: the budget's pause by the service's window, each attempt by the
 * request timeout, the attempts by the retry policy (abort is repeatable, http/retry-decision.ts). An
 * outage (outage.ts) outlasting those attempts is waited out: the abort is sent again with backoff,
 * through the budget, for up to `outageMs` from its first failure, and stops at the first that
 * answers. Aborting a finished execution is harmless (service.md §3.5), so a final failure is logged,
 * with the execution's id, not thrown. `settled` hears when the abort answered or finally failed.
 */
export function abortInBackground(source: ExecutionSource, executionId: string, options: BackgroundAbortOptions, settled?: () => void): void {
  const { logger, outageMs = 0, scheduler = asyncScheduler, random = Math.random } = options;
  let outage: Outage | undefined;
  const attempt = (): void => {
    source.abort(executionId).subscribe({
      error: (error: unknown) => {
        const now = scheduler.now();
        const step = afterFailure(outage, error, now, random(), outageMs);
        if (step.kind === 'retry') {
          outage = step.outage;
          timer(step.delayMs, scheduler).subscribe(attempt);
          return;
        }
        logger?.warn('Could not abort the execution', { executionId, error: step.outage === undefined ? error : outlasted(error, step.outage, now) });
        settled?.();
      },
      complete: () => {
        settled?.();
      },
    });
  };
  attempt();
}
