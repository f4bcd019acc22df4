import { DEFAULTS, type RequestBudgetOptions } from '../domain/options.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { nonNegative as finiteNonNegative, positiveInteger as wholePositive } from '../http/options.js';

export type { RequestBudgetOptions };

/**
 * The numbers the scheduler works with, derived once from the options.
 *
 * @example
 * ```ts
 * const limits = budgetLimits({ requestsPerMinute: 100 });
 * limits.pacingIntervalMs; // 682
 * ```
 */
export interface BudgetLimits {
  /** The service's limits (PROTOCOL §2.1). */
  readonly perMinute: number;
  readonly perDay: number;
  /** The service's fixed windows (PROTOCOL §2.1). */
  readonly serviceMinuteMs: number;
  readonly serviceDayMs: number;
  /** Our windows: the service's plus the latency allowance. */
  readonly minuteWindowMs: number;
  readonly dayWindowMs: number;
  /** What we allow ourselves per window: the limit minus the safety margin, at least 1. */
  readonly usablePerMinute: number;
  readonly usablePerDay: number;
  readonly burst: number;
  /** Steady spacing between sends (see `budgetLimits`). */
  readonly pacingIntervalMs: number;
  readonly duplicateStartSpacingMs: number;
  readonly starvationLimit: number;
}

const MINUTE_MS = 60_000; // PROTOCOL §2.1: a fixed window of one minute
const DAY_MS = 86_400_000; // PROTOCOL §2.1: a fixed window of one day

/**
 * Derives the scheduler's numbers from the options, validating them (an `InvalidArgumentError` names the bad one).
 *
 * Pacing (a GCRA, i.e. a token bucket of `burst` tokens): a send is allowed once `now >= tat − (burst − 1) × T`,
 * and each send moves `tat` (the theoretical arrival time) to `max(tat, now) + T`. So send k+1 comes at
 * least `(k − burst + 1) × T` after send 1, and with `T = ⌈W / (U − burst + 1)⌉` any U+1 sends span at least
 * W: **no window of length W ever holds more than U sends, wherever it starts.** That is what the service
 * needs, since its fixed windows start at whichever request comes first (PROTOCOL §2.1) and we cannot
 * know where. W is the service's 60 s plus the latency allowance J, because the service counts
 * arrivals: a 60 s window of arrivals holds requests sent within 60 s + J when travel times differ by
 * at most J.
 *
 * Defaults: U = 100 − 5% = 95, burst 5, W = 62 s → T = ⌈62,000 / 91⌉ = 682 ms, ≈ 88 sends per 60 s when
 * saturated (1.47/s against the ideal 1.67/s), at most 95 in any 62 s — 5 below the service's 100.
 * Under the limit a request waits for nothing: the bucket holds `burst` sends.
 *
 * @example
 * ```ts
 * budgetLimits({ requestsPerMinute: 30 }).usablePerMinute; // 29 (30 − ⌊30 × 0.05⌋)
 * ```
 */
export function budgetLimits(options: RequestBudgetOptions = {}): BudgetLimits {
  const perMinute = positiveInteger('requestsPerMinute', options.requestsPerMinute ?? DEFAULTS.budget.requestsPerMinute);
  const perDay = positiveInteger('requestsPerDay', options.requestsPerDay ?? DEFAULTS.budget.requestsPerDay);
  const safetyMargin = options.safetyMargin ?? DEFAULTS.budget.safetyMargin;
  if (!(safetyMargin >= 0 && safetyMargin < 1)) throw new InvalidArgumentError('budget.safetyMargin', `must be in [0, 1), got ${safetyMargin}`);
  const latencyAllowanceMs = nonNegative('latencyAllowanceMs', options.latencyAllowanceMs ?? DEFAULTS.budget.latencyAllowanceMs);
  const usablePerMinute = Math.max(1, perMinute - Math.floor(perMinute * safetyMargin));
  const usablePerDay = Math.max(1, perDay - Math.floor(perDay * safetyMargin));
  const burst = Math.min(positiveInteger('burst', options.burst ?? DEFAULTS.budget.burst), usablePerMinute);
  const minuteWindowMs = MINUTE_MS + latencyAllowanceMs;
  return {
    perMinute,
    perDay,
    serviceMinuteMs: MINUTE_MS,
    serviceDayMs: DAY_MS,
    minuteWindowMs,
    dayWindowMs: DAY_MS + latencyAllowanceMs,
    usablePerMinute,
    usablePerDay,
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
