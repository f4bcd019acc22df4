import { DEFAULTS, type RequestBudgetOptions } from '../domain/options.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { nonNegative as finiteNonNegative, positiveInteger as wholePositive } from '../http/options.js';

export type { RequestBudgetOptions };

/**
 * The numbers the scheduler works with, derived from the options (and lowered by the service's own
 * limits when its headers name lower ones, see `budgetLimits`).
 *
 * @example
 * ```ts
 * const limits = budgetLimits({ requestsPerMinute: 100 });
 * limits.pacingIntervalMs; // 682
 * ```
 */
export interface BudgetLimits {
  /** The service's limits (service.md §2.1). */
  readonly perMinute: number;
  readonly perDay: number;
  /** The service's fixed windows (service.md §2.1). */
  readonly serviceMinuteMs: number;
  readonly serviceDayMs: number;
  /** Our windows: the service's plus the latency allowance. */
  readonly minuteWindowMs: number;
  readonly dayWindowMs: number;
  /** What paced requests may send per minute: the limit minus the safety margin, at least 1. */
  readonly usablePerMinute: number;
  /** What polls and interactive calls may send per day: the limit minus the reserve, at least 1. */
  readonly usablePerDay: number;
  /** Kept for aborts and starts out of each day. */
  readonly dayReserve: number;
  /** Where starts stop within a day: the first half of the reserve is theirs, the rest stays for aborts. */
  readonly startsPerDay: number;
  /** The day bucket's capacity: what sporadic use may spend at the minute's pace (account-rules.ts, the day's bucket). */
  readonly dayBurst: number;
  readonly burst: number;
  /** Steady spacing between sends (see `budgetLimits`). */
  readonly pacingIntervalMs: number;
  readonly duplicateStartSpacingMs: number;
  readonly starvationLimit: number;
}

/**
 * The service's own limits, from its `X-RateLimit-Limit-RPM` / `-Daily` headers (service.md §2.1).
 *
 * @example
 * ```ts
 * const server: ServerLimits = { perMinute: 60 };
 * ```
 */
export interface ServerLimits {
  readonly perMinute?: number;
  readonly perDay?: number;
}

const MINUTE_MS = 60_000; // service.md §2.1: a fixed window of one minute
const DAY_MS = 86_400_000; // service.md §2.1: a fixed window of one day

/**
 * Derives the scheduler's numbers from the options, validating them (an `InvalidArgumentError` names
 * the bad one). Where the service's headers name a lower limit than configured (`server`), that one is
 * used: the account's limit is the service's to say.
 *
 * Pacing (a GCRA, i.e. a token bucket of `burst` tokens): a send is allowed once `now >= tat − (burst − 1) × T`,
 * and each send moves `tat` (the theoretical arrival time) to `max(tat, now) + T`. So send k+1 comes at
 * least `(k − burst + 1) × T` after send 1, and with `T = ⌈W / (U − burst + 1)⌉` any U+1 sends span at least
 * W: **no window of length W ever holds more than U sends, wherever it starts.** That is what the service
 * needs, since its fixed windows start at whichever request comes first (service.md §2.1) and we cannot
 * know where. W is the service's 60 s plus the latency allowance J, because the service counts
 * arrivals: a 60 s window of arrivals holds requests sent within 60 s + J when travel times differ by
 * at most J.
 *
 * Defaults: U = 100 − 5% = 95, burst 5, W = 62 s → T = ⌈62,000 / 91⌉ = 682 ms, ≈ 88 sends per 60 s when
 * saturated (1.47/s against the ideal 1.67/s), at most 95 in any 62 s — 5 below the service's 100.
 * Under the limit a request waits for nothing: the bucket holds `burst` sends.
 *
 * The day: of 10,000, a reserve of 5% (500) is kept for aborts and starts; polls and interactive calls
 * stop at 9,500, starts at 9,750, aborts at 10,000 — in any window of a day and the latency allowance,
 * wherever the service's window starts. The day's own bucket (account-rules.ts, the day's bucket) holds a tenth of the
 * 9,500 and refills at what the day sustains.
 *
 * @example
 * ```ts
 * budgetLimits({ requestsPerMinute: 30 }).usablePerMinute; // 29 (30 − ⌊30 × 0.05⌋)
 * budgetLimits({}, { perMinute: 60 }).perMinute; // 60: the service says less than the default 100
 * ```
 */
export function budgetLimits(options: RequestBudgetOptions = {}, server: ServerLimits = {}): BudgetLimits {
  const configuredPerMinute = positiveInteger('requestsPerMinute', options.requestsPerMinute ?? DEFAULTS.budget.requestsPerMinute);
  const configuredPerDay = positiveInteger('requestsPerDay', options.requestsPerDay ?? DEFAULTS.budget.requestsPerDay);
  const perMinute = Math.min(configuredPerMinute, server.perMinute ?? Number.POSITIVE_INFINITY);
  const perDay = Math.min(configuredPerDay, server.perDay ?? Number.POSITIVE_INFINITY);
  const safetyMargin = share('safetyMargin', options.safetyMargin ?? DEFAULTS.budget.safetyMargin);
  const dayReserveShare = share('dayReserve', options.dayReserve ?? DEFAULTS.budget.dayReserve);
  const dayBurstShare = share('dayBurst', options.dayBurst ?? DEFAULTS.budget.dayBurst);
  const latencyAllowanceMs = nonNegative('latencyAllowanceMs', options.latencyAllowanceMs ?? DEFAULTS.budget.latencyAllowanceMs);
  const usablePerMinute = Math.max(1, perMinute - Math.floor(perMinute * safetyMargin));
  const usablePerDay = Math.max(1, perDay - Math.floor(perDay * dayReserveShare));
  const dayReserve = perDay - usablePerDay;
  const dayBurst = Math.max(1, Math.floor(usablePerDay * dayBurstShare));
  const dayWindowMs = DAY_MS + latencyAllowanceMs;
  const burst = Math.min(positiveInteger('burst', options.burst ?? DEFAULTS.budget.burst), usablePerMinute);
  const minuteWindowMs = MINUTE_MS + latencyAllowanceMs;
  return {
    perMinute,
    perDay,
    serviceMinuteMs: MINUTE_MS,
    serviceDayMs: DAY_MS,
    minuteWindowMs,
    dayWindowMs,
    usablePerMinute,
    usablePerDay,
    dayReserve,
    startsPerDay: perDay - Math.ceil(dayReserve / 2),
    dayBurst,
    burst,
    pacingIntervalMs: Math.ceil(minuteWindowMs / (usablePerMinute - burst + 1)),
    duplicateStartSpacingMs: nonNegative('duplicateStartSpacingMs', options.duplicateStartSpacingMs ?? DEFAULTS.budget.duplicateStartSpacingMs),
    starvationLimit: positiveInteger('starvationLimit', options.starvationLimit ?? DEFAULTS.budget.starvationLimit),
  };
}

/** Budget options are named as `createClient` takes them: `budget.<name>`. */
function positiveInteger(name: string, value: number): number {
  return wholePositive(`budget.${name}`, value);
}

function nonNegative(name: string, value: number): number {
  return finiteNonNegative(`budget.${name}`, value);
}

function share(name: string, value: number): number {
  if (!(value >= 0 && value < 1)) throw new InvalidArgumentError(`budget.${name}`, `must be in [0, 1), got ${value}`);
  return value;
}
