import type { SchedulerLike } from 'rxjs';
import type { AccountBudget } from './budget.js';
import type { DurationModel } from './durations.js';
import type { Endpoint } from './endpoints.js';
import type { Logger } from './model.js';

/**
 * The options of a client, in one place: their types and their defaults.
 * Each layer checks and fills in the part it uses (http/options.ts holds the checks they share).
 */

/**
 * How failed requests are retried (see `decideRetry` for which failures qualify).
 *
 * @example
 * ```ts
 * createClient({ apiKey, baseUrl, retry: { retries: 5, baseDelayMs: 250 } });
 * ```
 */
export interface RetryOptions {
  /** Retries after the first attempt. Default 3; `0` never retries. */
  readonly retries?: number;
  /** First backoff step, doubled per retry, with jitter. Default 500 ms. */
  readonly baseDelayMs?: number;
  /** Cap of one backoff step. Default 10 s. */
  readonly maxDelayMs?: number;
  /**
   * Wait after a 429 that carries no `Retry-After`: the service's windows are fixed minutes that start
   * at the first request (service.md §2.1), so one minute always reaches a fresh window. Default 60 s.
   */
  readonly rateLimitWaitMs?: number;
  /** Longest wait a call accepts; a server asking for more (`Retry-After`) gets its error surfaced. Default 65 s. */
  readonly maxWaitMs?: number;
}

/**
 * Per-endpoint timeouts in milliseconds; `default` covers the endpoints not named.
 *
 * @example
 * ```ts
 * createClient({ apiKey, baseUrl, timeoutMs: { default: 10_000, output: 60_000 } });
 * ```
 */
export type TimeoutOptions = { readonly default?: number } & { readonly [E in Endpoint]?: number };

/**
 * Bounds of the status poll cadence, per client (`polling`) or per run (`pollInterval`).
 *
 * @example
 * ```ts
 * createClient({ apiKey, baseUrl, polling: { minMs: 1_000, maxMs: 5_000 } });
 * ```
 */
export interface PollInterval {
  /** The fastest cadence: after the start and right after any change. Default 500 ms. */
  readonly minMs?: number;
  /** The slowest cadence, reached while nothing changes. Default 10 s. */
  readonly maxMs?: number;
}

/**
 * How a request budget is configured. Every field is optional; the defaults fit the service's
 * account limits (service.md §2.1). `createClient` takes `budget: { requestsPerMinute } | AccountBudget | false`.
 *
 * @example
 * ```ts
 * createClient({ apiKey, baseUrl, budget: { requestsPerMinute: 60, requestsPerDay: 5_000 } });
 * ```
 */
export interface RequestBudgetOptions {
  /** The account's limit per minute (service.md §2.1). Default 100. */
  readonly requestsPerMinute?: number;
  /** The account's limit per day (service.md §2.1). Default 10,000. */
  readonly requestsPerDay?: number;
  /**
   * Share of the minute's limit never used, for what the budget cannot see coming (another process
   * starting up, requests of ours that reach the service out of order); aborts may use it. Default
   * 0.05: 95 of 100 per minute.
   */
  readonly safetyMargin?: number;
  /**
   * Share of the day kept for aborts and starts: polls and interactive calls never take it, so a
   * service that has spent its day can still start a run and always abort one. Starts may take its
   * first half, aborts all of it. Default 0.05: 500 of 10,000.
   */
  readonly dayReserve?: number;
  /**
   * Share of the usable day that sporadic use may spend at the minute's pace before the day paces it:
   * the capacity of the day's bucket. Beyond it, requests go at what the day sustains (what is left of
   * it over the time until the window gives enough back: about 6.6 a minute for a day used evenly). The
   * larger, the longer a busy spell runs at full speed, and the less is left for the rest of the day.
   * Default 0.1: 950 requests.
   */
  readonly dayBurst?: number;
  /**
   * How many requests may leave back to back after a quiet spell. Default 5. Each one is paid for in
   * pace, so on a small account it is lowered to what keeps the pace at 85% of the minute's limit:
   * 1 at 7 a minute (one request every 8.9 s), 2 at 20 a minute.
   */
  readonly burst?: number;
  /**
   * How far apart two requests' travel times to the service may be. The service counts arrivals, we
   * count sends; the budget's windows are this much longer than the service's. Default 2,000 ms.
   */
  readonly latencyAllowanceMs?: number;
  /**
   * Gap between an identical start's answer and the next identical start. The service refuses a
   * duplicate within 1 s (service.md §2.2). Default 1,100 ms.
   */
  readonly duplicateStartSpacingMs?: number;
  /**
   * How many requests in a row may overtake waiting lower-priority ones before the oldest of those
   * goes next. Default 9: lower priorities keep at least a tenth of the budget.
   */
  readonly starvationLimit?: number;
}

/**
 * Options of `createAccountBudget`: the budget's numbers, and its clock.
 *
 * @example
 * ```ts
 * const budget = createAccountBudget({ requestsPerMinute: 100, scheduler: emulator.scheduler });
 * ```
 */
export interface AccountBudgetOptions extends RequestBudgetOptions {
  /**
   * The budget's clock and timers (RxJS). Default real time. Give it the scheduler its clients use:
   * the account's windows are timed by this clock, whatever theirs.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * The account's learned node durations (`createDurationModel()`), shared by every client given this
   * budget: `AccountBudget.durations`. Default: none, and each client keeps its own.
   */
  readonly durations?: DurationModel;
}

/**
 * Options of {@link createClient}.
 *
 * @example
 * ```ts
 * const client = createClient({ apiKey: process.env.FLOWSTREAM_API_KEY!, baseUrl: 'https://api.example.com/v1', polling: { maxMs: 5000 } });
 * ```
 */
export interface ClientOptions {
  /** The API key (`rf_…`, service.md §1.6). Never shown in errors, logs or `inspect`. */
  readonly apiKey: string;
  /** The API's base URL, ending in `/v1` (spec §9). Required unless `FLOWSTREAM_BASE_URL` is set. */
  readonly baseUrl?: string;
  /** The `fetch` to send requests with (tests, proxies, the emulator's in-process fetch). */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * Request timeouts. A number sets the default of every endpoint except those with their own default:
   * `copilot` (330 s, because generation blocks up to 300 s, service.md §2.4) and `upload` (120 s).
   * Default 30 s.
   */
  readonly timeoutMs?: number | TimeoutOptions;
  /** Retry policy, or `false` to never retry. */
  readonly retry?: RetryOptions | false;
  /** Extra headers sent with every API request (never to file downloads). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Where warnings go (an `of_` text variable, service.md §5.5). Default: none. A logger that throws is ignored. */
  readonly logger?: Logger;
  /**
   * The most bytes an API answer may have once decoded (gzip included); a larger one is cut off and
   * fails with `ResponseTooLargeError`, so a hostile or broken server cannot fill the memory. Default 8 MiB.
   */
  readonly maxResponseBytes?: number;
  /** Bounds of every run's status polling cadence (default 500 ms – 10 s); a run's `pollInterval` overrides them. */
  readonly polling?: PollInterval;
  /**
   * How long every run follows its execution through an outage of the service or of the request
   * budget, reading again with backoff, before it errors (see `RunOptions.outageMs`, which overrides
   * it). Default 10 minutes.
   */
  readonly outageMs?: number;
  /**
   * The request budget every request of this client passes through: default 100 requests per minute
   * and 10,000 per day, the service's account limits (service.md §2.1). An {@link AccountBudget}
   * (`createAccountBudget()`) is shared with every other client given it: one count for the account.
   * `false` sends requests as soon as they are made.
   */
  readonly budget?: RequestBudgetOptions | AccountBudget | false;
  /**
   * The client's only clock and timers (RxJS): poll cadence, budget windows and pacing, retry waits,
   * request and run deadlines. Default real time (`asyncScheduler`). Give it `emulator.scheduler` to
   * live on an accelerated emulator's time, or a `TestScheduler` in tests.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Learned node durations, with which a run times its status reads where a change is
   * likely: around a node's expected end instead of evenly. Default: the budget's
   * (`AccountBudget.durations`) when it has one, else a model of this client's own in memory. A node
   * the model has not seen end a few times is polled exactly as without one. `false`: no model.
   */
  readonly durations?: DurationModel | false;
}

/** Every default of {@link ClientOptions}, in one object. */
export const DEFAULTS = {
  /** Timeout of every endpoint without its own (copilot and upload have longer ones). */
  timeoutMs: 30_000,
  /** Far above any answer of the API, far below what hurts. */
  maxResponseBytes: 8 * 1024 * 1024,
  retry: { retries: 3, baseDelayMs: 500, maxDelayMs: 10_000, rateLimitWaitMs: 60_000, maxWaitMs: 65_000 },
  /**
   * The execution status and node starts move on a ~1.5 s server tick (service.md §3.2, §3.3), node ends
   * when the work does, so 500 ms after a change catches the follow-up within a third of a tick. While
   * nothing changes the wait grows to 10 s: a long LLM node then costs 6 status reads a minute instead
   * of the 30 of the service's own 2 s loop (service.md §6), so several runs fit in one account's 100
   * requests per minute (§2.1).
   */
  polling: { minMs: 500, maxMs: 10_000 },
  /**
   * A run follows its execution through an outage this long: a service restart, a deploy, a network
   * blip or a Redis failover are over well within it, and an execution runs for up to 30 minutes
   * (service.md §3.6), so giving up after seconds would abandon most of it.
   */
  outageMs: 10 * 60_000,
  budget: {
    requestsPerMinute: 100,
    requestsPerDay: 10_000,
    safetyMargin: 0.05,
    dayReserve: 0.05,
    dayBurst: 0.1,
    burst: 5,
    latencyAllowanceMs: 2_000,
    duplicateStartSpacingMs: 1_100,
    starvationLimit: 9,
  },
} as const;
