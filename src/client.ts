/**
 * The composition root: one request budget, the typed HTTP client behind it, and reactive runs on
 * top — the one-way data flow (runs → budget → http → fetch), wired in one place.
 */
import { asyncScheduler, type Observable, type SchedulerLike } from 'rxjs';
import { hasMethods, InvalidArgumentError, isRecord, objectArgument, schedulerArgument, shownType, timerDelay } from './errors/validation-errors.js';
import { createAccountBudget, createDurationModel, isAccountBudget, type BudgetState } from './budget/index.js';
import type { DurationModel } from './domain/durations.js';
import { present } from './domain/present.js';
import type { ClientOptions as CoreClientOptions } from './domain/options.js';
import { createHttpClient, type HttpClient } from './http/index.js';
import { safeLogger } from './http/safe-logger.js';
import { createRuns, type RunAborts, type RunHandles, type Runs } from './runs/runs.js';
import { type RunEvent, toAsyncIterable } from './runs/events.js';
import { createRunHub, type RunHub } from './runs/run-hub.js';
import type { IdempotencyStore } from './runs/idempotency.js';
import { type RunState, toRunState } from './runs/run-state.js';
import type { RunTelemetryHook } from './runs/run-lifecycle.js';
import type { RequestTelemetryHook } from './domain/telemetry.js';
import type { PipelineTelemetryHook } from './pipeline/pipeline-telemetry.js';

/**
 * Options of {@link createClient}.
 *
 * @example
 * ```ts
 * const hub = createRunHub();
 * const client = createClient({ apiKey, baseUrl, hub });
 * ```
 */
export interface ClientOptions extends CoreClientOptions {
  /**
   * Where the client's watches share one poll per execution, and its runs offer theirs to watches of
   * the same execution (see `createRunHub`). Give one hub to several clients, or to a relay, to share
   * across them. Default: a new in-memory hub of this client's own.
   */
  readonly hub?: RunHub;
  /**
   * Where the client reports its requests, runs and pipelines, for traces and metrics. Use
   * `createTelemetry()` of `flowstream/otel` for OpenTelemetry. Default: none, and no telemetry work at all.
   *
   * @example
   * ```ts
   * import { createTelemetry } from 'flowstream/otel';
   * const client = createClient({ apiKey, baseUrl, telemetry: createTelemetry({ tracerProvider, meterProvider }) });
   * ```
   */
  readonly telemetry?: ClientTelemetry;
  /**
   * Where runs with an `idempotencyKey` keep their keys. Default: this client's own memory. Give one
   * store to several clients of an account to share keys in a process, or
   * `createRedisIdempotencyStore()` of `flowstream/redis` to share them across a fleet.
   *
   * @example
   * ```ts
   * import { createRedisIdempotencyStore } from 'flowstream/redis';
   * const client = createClient({ apiKey, baseUrl, idempotency: createRedisIdempotencyStore({ redis, account: 'acme-prod' }) });
   * ```
   */
  readonly idempotency?: IdempotencyStore;
}

/**
 * The telemetry hook of a client (`ClientOptions.telemetry`): an observer of its requests, runs and
 * pipelines, known to the client only by this interface (`flowstream/otel` makes one from OpenTelemetry).
 *
 * @example
 * ```ts
 * const telemetry: ClientTelemetry = createTelemetry({ tracerProvider });
 * ```
 */
export interface ClientTelemetry extends RequestTelemetryHook, RunTelemetryHook, PipelineTelemetryHook {
  /** Told of each client made with this hook: what it may read of the client while it lives. */
  attach?(client: TelemetryTarget): void;
}

/**
 * What a telemetry hook may read of a client: its request budget (`undefined` without one), whose
 * state gauges read when they are collected.
 *
 * @example
 * ```ts
 * const remaining = target.budget?.snapshot().remainingThisMinute;
 * ```
 */
export interface TelemetryTarget {
  /** Hold it weakly: the client and its budget go when their users let go of them. */
  readonly budget: { snapshot(): BudgetState } | undefined;
}

/**
 * Options of `client.events` for a run's states instead of its events.
 *
 * @example
 * ```ts
 * for await (const state of client.events(client.run('c-1'), { sampleStateMs: 5_000 })) updateCard(state);
 * ```
 */
export interface StateEventsOptions {
  /** Yield the run's state (see `toRunState`), at most one per period and always the final one. */
  readonly sampleStateMs: number;
}

/** What UIs and logs can read of the client's request budget (shared with other clients when it is an account budget given to several). */
export interface BudgetView {
  /** The state now: requests used and remaining in the windows, the day's pace, queue depth, each run's poll interval. */
  snapshot(): BudgetState;
  /** The state on every change, starting with the current one. */
  readonly state$: Observable<BudgetState>;
}

/**
 * A flowstream client: the plain calls of the Workflow API and its runs as Observables.
 *
 * @example
 * ```ts
 * const client = createClient({ apiKey, baseUrl });
 * client.run('c-123', { variables: { topic: 'tides' } }).pipe(ofType('node'))
 *   .subscribe((event) => console.log(event.title, event.status));
 * ```
 */
export interface Client extends HttpClient, Runs, RunHandles, RunAborts {
  /**
   * Runs an Observable as an async iterable, for code that does not use RxJS; leaving the loop
   * (`break`, `return`, a throw) unsubscribes, and so aborts a run.
   *
   * @example
   * ```ts
   * for await (const event of client.events(client.run('c-123'))) if (event.type === 'finished') console.log(event.result);
   * ```
   */
  events<T>(source: Observable<T>): AsyncIterable<T>;
  /**
   * A run's states instead of its events, sampled for a display refreshed on a timer: at most one per
   * `sampleStateMs`, always the final one (with the result). Leaving the loop aborts the run as above.
   *
   * @example
   * ```ts
   * for await (const state of client.events(client.run('c-123'), { sampleStateMs: 5_000 })) {
   *   await editCard(`${state.progress.succeeded}/${state.progress.total}`);
   * }
   * ```
   */
  events(source: Observable<RunEvent>, options: StateEventsOptions): AsyncIterable<RunState>;
  /** The request budget's state, or `undefined` when the client was made with `budget: false`. */
  readonly budget: BudgetView | undefined;
  /**
   * The learned node durations its runs time their reads by: to watch (`state$`), export
   * (`toJSON()`) or seed (`import`); `undefined` with `durations: false`.
   *
   * @example
   * ```ts
   * writeFileSync('durations.json', JSON.stringify(client.durations?.toJSON()));
   * ```
   */
  readonly durations: DurationModel | undefined;
  /** The hub its runs and watches share executions through (`ClientOptions.hub`). */
  readonly hub: RunHub;
  /** The telemetry hook it reports to (`ClientOptions.telemetry`); pipelines over it report there too. */
  readonly telemetry: ClientTelemetry | undefined;
}

/** `ClientOptions.telemetry` checked: a hook with its three reporters, or none. */
function telemetryHook(given: unknown): ClientTelemetry | undefined {
  if (given === undefined) return undefined;
  if (!hasMethods(given, TELEMETRY_REPORTERS)) {
    throw new InvalidArgumentError('telemetry', 'must be a telemetry hook with request, run and pipeline (e.g. createTelemetry() of flowstream/otel)');
  }
  return given as ClientTelemetry;
}

/** `budget` as given: `false`, an account budget, or this client's own budget's options (named by `createAccountBudget`). */
function budgetOption(budget: ClientOptions['budget']): NonNullable<ClientOptions['budget']> {
  const given: unknown = budget;
  if (given === undefined) return {};
  if (given === false || isRecord(given)) return budget ?? {};
  throw new InvalidArgumentError('budget', `must be { requestsPerMinute?, requestsPerDay?, … }, an account budget or false (got ${given === true ? 'true' : shownType(given)})`);
}

const TELEMETRY_REPORTERS = ['request', 'run', 'pipeline'] as const;

/**
 * Creates a client. Every request it makes — plain calls, polls of every run, retries — shares one
 * request budget, so many concurrent runs never draw a 429 from the service; clients given the same
 * `createAccountBudget()` share it with each other.
 *
 * @example
 * ```ts
 * const client = createClient({ apiKey: process.env.FLOWSTREAM_API_KEY!, baseUrl: 'https://api.example.com/v1' });
 * const result = await runResult(client.run('c-123'));
 * ```
 */
export function createClient(options: ClientOptions): Client {
  // Typed as required, but a JavaScript caller can leave it out.
  if ((options as ClientOptions | undefined) === undefined) throw new InvalidArgumentError('options', 'is required: { apiKey, baseUrl }');
  objectArgument('options', options);
  const telemetry = telemetryHook(options.telemetry);
  const scheduler = schedulerArgument('scheduler', options.scheduler) ?? asyncScheduler;
  const given = budgetOption(options.budget);
  // An account budget is shared as given; options make this client its own, on its clock.
  const budget = given === false ? undefined : isAccountBudget(given) ? given : createAccountBudget({ ...given, scheduler });
  const http = createHttpClient({ ...options, scheduler, gate: budget });
  const logger = safeLogger(options.logger);
  // Learned durations: the client's own model, the budget's (the account's), or none.
  const durations = options.durations === false ? undefined : (options.durations ?? budget?.durations ?? createDurationModel());
  const hub = options.hub ?? createRunHub();
  const runOptions = present({
    polling: options.polling,
    outageMs: options.outageMs,
    logger,
    // The budget times every run's read: each run registers its read's need there.
    needRead: budget?.needRead?.bind(budget),
    durations,
    telemetry,
    idempotency: options.idempotency,
  });
  const runs = createRuns(http.executions, { ...runOptions, hub, scheduler }, http.workflows);
  telemetry?.attach?.({ budget });
  return Object.freeze({
    ...http,
    ...runs,
    events: eventsOn(scheduler),
    budget: budget === undefined ? undefined : { snapshot: () => budget.snapshot(), state$: budget.state$ },
    durations,
    hub,
    telemetry,
  });
}

/** `client.events`, its sampling timers on the client's scheduler. */
function eventsOn(scheduler: SchedulerLike): Client['events'] {
  function events<T>(source: Observable<T>): AsyncIterable<T>;
  function events(source: Observable<RunEvent>, options: StateEventsOptions): AsyncIterable<RunState>;
  function events(source: Observable<unknown>, options?: StateEventsOptions): AsyncIterable<unknown> {
    if (options === undefined) return toAsyncIterable(source);
    const sampleMs = timerDelay('sampleStateMs', objectArgument('options', options).sampleStateMs);
    // Only the second overload passes options: the source is a run's events.
    return toAsyncIterable((source as Observable<RunEvent>).pipe(toRunState({ sampleMs, scheduler })));
  }
  return events;
}
