import type { ServerView } from '../domain/budget.js';
import { DEFAULTS, type RequestBudgetOptions } from '../domain/options.js';
import type { GateTicket, RateLimitInfo } from '../domain/requests.js';
import { InvalidArgumentError, nonNegative, positiveInteger } from '../errors/validation-errors.js';
import type { FairClass } from './fair-queue.js';

export type { RequestBudgetOptions };

/**
 * The numbers the budget works with, derived from the options (and lowered by the service's own
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

/** The service's fixed windows (service.md §2.1): a minute and a day. */
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/**
 * Derives the budget's numbers from the options, validating them (an `InvalidArgumentError` names
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
 * Under the limit a request waits for nothing: the bucket holds `burst` sends. The burst is paid for
 * in pace, so on a small account it is made smaller until the saturated pace is at least 85% of the
 * limit (`minutePace`): at 7 a minute a burst of 5 would leave 3 sends per 62 s.
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
  // Each option as given or by default, checked and named as `createClient` takes it: `budget.<name>`.
  const option = (name: keyof RequestBudgetOptions, check: (name: string, value: number) => number): number => check(`budget.${name}`, options[name] ?? DEFAULTS.budget[name]);
  const configuredPerMinute = option('requestsPerMinute', positiveInteger);
  const configuredPerDay = option('requestsPerDay', positiveInteger);
  const perMinute = Math.min(configuredPerMinute, server.perMinute ?? Infinity);
  const perDay = Math.min(configuredPerDay, server.perDay ?? Infinity);
  const safetyMargin = option('safetyMargin', share);
  const dayReserveShare = option('dayReserve', share);
  const dayBurstShare = option('dayBurst', share);
  const latencyAllowanceMs = option('latencyAllowanceMs', nonNegative);
  const usablePerMinute = Math.max(1, perMinute - Math.floor(perMinute * safetyMargin));
  const usablePerDay = Math.max(1, perDay - Math.floor(perDay * dayReserveShare));
  const dayReserve = perDay - usablePerDay;
  const dayBurst = Math.max(1, Math.floor(usablePerDay * dayBurstShare));
  const dayWindowMs = DAY_MS + latencyAllowanceMs;
  const minuteWindowMs = MINUTE_MS + latencyAllowanceMs;
  const pace = minutePace({ perMinute, usablePerMinute, burst: option('burst', positiveInteger), windowMs: minuteWindowMs });
  return {
    perMinute,
    perDay,
    minuteWindowMs,
    dayWindowMs,
    usablePerMinute,
    usablePerDay,
    dayReserve,
    startsPerDay: perDay - Math.ceil(dayReserve / 2),
    dayBurst,
    burst: pace.burst,
    pacingIntervalMs: pace.intervalMs,
    duplicateStartSpacingMs: option('duplicateStartSpacingMs', nonNegative),
    starvationLimit: option('starvationLimit', positiveInteger),
  };
}

/**
 * The share of the service's minute limit that a saturated pacer sends at least, whatever the burst
 * asked for — unless the safety margin and the latency allowance leave less (`minutePace`).
 */
export const MIN_PACE_SHARE = 0.85;

/**
 * The minute's pacer (a GCRA, see `budgetLimits`) for a limit: the burst it holds and its interval.
 *
 * With `n = U − burst + 1` the interval is `T = ⌈W / n⌉`, so no window of length W holds more than U
 * sends, wherever it starts; saturated, the pacer sends `60 s / T` a minute, about `n × 60 / 62`.
 * Every send of the burst is one less of the steady pace, which costs a small account most of it
 * (7 a minute with a burst of 5: 3 sends per 62 s). So the burst is the largest one, up to the one
 * asked for, whose interval is at most `⌊60 s / (0.85 × limit)⌋` (`MIN_PACE_SHARE` of the service's
 * limit a minute) — or, where the safety margin and the latency allowance leave less than that, at
 * most `⌈W / U⌉`, the most they allow (then a burst of 1 at worst).
 *
 * @example
 * ```ts
 * minutePace({ perMinute: 100, usablePerMinute: 95, burst: 5, windowMs: 62_000 }); // { burst: 5, intervalMs: 682 }: 88 a minute
 * minutePace({ perMinute: 7, usablePerMinute: 7, burst: 5, windowMs: 62_000 }); // { burst: 1, intervalMs: 8_858 }: 6.8 a minute
 * ```
 */
export function minutePace(input: { readonly perMinute: number; readonly usablePerMinute: number; readonly burst: number; readonly windowMs: number }): {
  readonly burst: number;
  readonly intervalMs: number;
} {
  const usable = input.usablePerMinute;
  // The longest interval the pace may have: MIN_PACE_SHARE of the limit in a minute of the service,
  // unless the usable count per window is less.
  const longestIntervalMs = Math.max(Math.floor(MINUTE_MS / (MIN_PACE_SHARE * input.perMinute)), Math.ceil(input.windowMs / usable));
  // ⌈W / n⌉ ≤ longest ⟺ n ≥ W / longest: the fewest steady sends per window that keep that pace.
  const fewestSteady = Math.ceil(input.windowMs / longestIntervalMs);
  const burst = Math.max(1, Math.min(input.burst, usable, usable - fewestSteady + 1));
  return { burst, intervalMs: Math.ceil(input.windowMs / (usable - burst + 1)) };
}

/** A share of a limit: from 0 up to, not including, the whole. */
function share(name: string, value: number): number {
  if (!(value >= 0 && value < 1)) throw new InvalidArgumentError(name, `must be in [0, 1), got ${value}`);
  return value;
}

/**
 * The account's rule book: everything the budget knows of the account, whoever's requests they are,
 * as one small JSON record, and the account's rules as pure functions over it — `(record, event, now,
 * config) → record'` and questions such as "when may a request of this class go". The same functions
 * run in memory and against Redis (where a ledger reads the record, applies them and writes it back
 * atomically): the rules are written once. What only an account shared by several processes has (each
 * process's share of the reads, its own lower limit, its starts' claims, its lease) is the rule book's
 * chapter in process-rules.ts, which these functions apply for the process their config names.
 *
 * The record stays small however busy the day: the minute's sends as times (at most two windows of
 * them, a few hundred), the day's as counts per minute (at most 1,442 numbers), the service's caps,
 * the pause after a 429, identical-start marks while their spacing runs and one entry per live process.
 */

/** "Never" in the record: a time before any clock's (JSON has no infinities). */
export const NEVER = -8.64e15;

/** The day is counted in buckets this long: a send counts as made at its bucket's end, which errs late, never early. */
export const DAY_BUCKET_MS = 60_000;

/**
 * One identical-start key (service.md §2.2): how many of its attempts are on their way, and when the
 * last was sent or answered.
 *
 * @example
 * ```ts
 * const mark: StartMark = { inFlight: 0, at: 1_000 };
 * ```
 */
export interface StartMark {
  readonly inFlight: number;
  readonly at: number;
}

/**
 * A process of the account (several processes may share it through Redis): until when its lease
 * runs (one killed with -9 is forgotten after it), its configured limit per minute, how many runs it
 * has waiting to read, the pacers of its share of the reads and of its own lower limit, and until
 * when a start or abort of it waits for the account's pace (`claimUntil`).
 *
 * @example
 * ```ts
 * const entry: ProcessEntry = { until: 124_000, perMinute: 100, burst: 5, demand: 3, readTat: NEVER, ownTat: NEVER };
 * ```
 */
export interface ProcessEntry {
  readonly until: number;
  readonly perMinute: number;
  readonly burst: number;
  readonly demand: number;
  readonly readTat: number;
  readonly ownTat: number;
  /**
   * While starts or aborts of this process wait for the account's pace: the slot the next one waits
   * for, and a lease after it (the pacer's burst, see `requested` in process-rules.ts). The other
   * processes' reads and interactive calls yield to it until then. Absent: none.
   */
  readonly claimUntil?: number;
}

/**
 * What the account is: a plain JSON value (times in ms on the budget's clock, `NEVER` for none).
 *
 * @example
 * ```ts
 * const record = newAccountRecord('e-1');
 * JSON.parse(JSON.stringify(record)); // the same record
 * ```
 */
export interface AccountRecord {
  /** Set when the record is made: a process that knew another one sees that the store lost the account. */
  readonly epoch: string;
  /** The account's clock: the latest time a change was applied. It never steps back. */
  readonly at: number;
  /** The service's limits, when its headers named lower ones than configured (service.md §2.1). */
  readonly serverLimits: ServerLimits;
  /** The pacer's theoretical arrival time (`Pacer`, below). */
  readonly tat: number;
  /** The times of the sends of the last two minute windows, oldest first. */
  readonly recent: readonly number[];
  /** The day's sends per bucket of `DAY_BUCKET_MS`: `dayCounts[i]` in bucket `dayFrom + i`. */
  readonly dayFrom: number;
  readonly dayCounts: readonly number[];
  /** The day's bucket (`DayBucket`, below); `null` while nothing was sent: full. */
  readonly dayBucket: DayBucket | null;
  readonly lastSendAt: number;
  /** After a 429 (or a lost store) nothing is sent before this time. */
  readonly pausedUntil: number;
  readonly minuteCap: ServerCap | null;
  readonly dayCap: ServerCap | null;
  /** The last `X-RateLimit-Remaining-*` values the service sent, for UIs and logs. */
  readonly server: ServerView;
  /** Per scope, until when the service's last word was "0 remaining". */
  readonly zeroUntil: { readonly minute: number; readonly day: number };
  /** Per scope, whether the service's remaining count proved meaningless and is no longer followed. */
  readonly ignoring: { readonly minute: boolean; readonly day: boolean };
  /** Identical starts recently sent, by key (a digest of it in a shared store). */
  readonly starts: Readonly<Record<string, StartMark>>;
  readonly processes: Readonly<Record<string, ProcessEntry>>;
  /** The loss of a previous record was seen and paused for (once per record). */
  readonly lossSeen: boolean;
}

/**
 * How one process applies the rules: its configured numbers and, when the account is shared, the
 * process (`SharedProcess` of process-rules.ts).
 *
 * @example
 * ```ts
 * const config: AccountConfig = { options: { requestsPerMinute: 60 } };
 * ```
 */
export interface AccountConfig {
  readonly options: RequestBudgetOptions;
  readonly process?: AccountProcess;
}

/**
 * A process of an account that several processes share (through Redis): its id and lease, and the
 * rules only such an account has, which the rule book's functions apply on its behalf. A budget alone
 * in memory has none, so it never loads them (process-rules.ts).
 */
export interface AccountProcess {
  readonly id: string;
  readonly leaseMs: number;
  /** When a request of `klass` of this process may go as far as the other processes go: its own lower limit, its share of the reads, their starts' and aborts' claims. */
  readyAt(record: AccountRecord, klass: Exclude<FairClass, 'abort'>, now: number, config: AccountConfig, limits: BudgetLimits): number;
  /** The part of the account's pace for reads that this process's reads get, from 0 to 1. */
  readsShare(record: AccountRecord, now: number, config: AccountConfig, limits: BudgetLimits): number;
  /** The record after this process sent a request of `klass` at `now`: its own pacers moved on. */
  afterSend(record: AccountRecord, klass: FairClass, now: number, config: AccountConfig, limits: BudgetLimits): AccountRecord;
}

/**
 * What an answer said, for `afterReport`: when its request was sent (`undefined`: not known), how
 * many of this process's requests are still on their way, the HTTP status and the rate-limit headers.
 *
 * @example
 * ```ts
 * const answer: AccountAnswer = { sentAt: 900, inFlight: 0, httpStatus: 200, rateLimit: { remainingPerMinute: 12 } };
 * ```
 */
export interface AccountAnswer {
  readonly sentAt: number | undefined;
  readonly inFlight: number;
  readonly httpStatus: number | undefined;
  readonly rateLimit: RateLimitInfo;
  readonly startKey?: string | undefined;
}

/**
 * The verdict on one request: send now, wait until `at`, or (a start the day cannot take) refused until `at`.
 *
 * @example
 * ```ts
 * const verdict: Verdict = { verdict: 'wait', at: 61_000 };
 * ```
 */
export type Verdict = { readonly verdict: 'granted' } | { readonly verdict: 'wait'; readonly at: number } | { readonly verdict: 'refused'; readonly at: number };

/** Over how many minutes the day bucket's tokens are spread in the pace the account gives reads (`readsPerMinute`). */
const DAY_BUCKET_SPREAD_MINUTES = 15;

/**
 * A record with nothing sent yet.
 *
 * @example
 * ```ts
 * newAccountRecord('e-1').recent; // []
 * ```
 */
export function newAccountRecord(epoch: string, at: number = NEVER): AccountRecord {
  return {
    epoch,
    at,
    serverLimits: {},
    tat: NEVER,
    recent: [],
    dayFrom: 0,
    dayCounts: [],
    dayBucket: null,
    lastSendAt: NEVER,
    pausedUntil: NEVER,
    minuteCap: null,
    dayCap: null,
    server: {},
    zeroUntil: { minute: NEVER, day: NEVER },
    ignoring: { minute: false, day: false },
    starts: {},
    processes: {},
    lossSeen: false,
  };
}

/**
 * The key that makes two starts identical (same canvas and exact body, service.md §2.2), or `undefined`
 * for any other request. By endpoint, not class: a start given a lower priority is still a start.
 *
 * @example
 * ```ts
 * identicalStartKey({ endpoint: 'run', priority: 'start', key: 'c-1 {}' }); // 'c-1 {}'
 * ```
 */
export function identicalStartKey(ticket: GateTicket): string | undefined {
  return ticket.endpoint === 'run' ? ticket.key : undefined;
}

const limitsCache = new WeakMap<AccountConfig, WeakMap<ServerLimits, Map<number | string, BudgetLimits>>>();

/**
 * The limits in force: the configured ones (the highest of the account's live processes: the
 * account is paced by it, a process configured lower is held to its own, process-rules.ts), lowered by
 * the service's own when its headers named lower ones.
 *
 * @example
 * ```ts
 * accountLimits(record, config).usablePerMinute; // 95 by default
 * ```
 */
export function accountLimits(record: AccountRecord, config: AccountConfig): BudgetLimits {
  let perMinute = configuredPerMinute(config);
  let burst = config.options.burst;
  for (const id in record.processes) {
    const entry = record.processes[id];
    if (entry !== undefined && entry.perMinute > perMinute) ({ perMinute, burst } = entry);
  }
  return limitsFor(config, perMinute, record.serverLimits, burst);
}

export function configuredPerMinute(config: AccountConfig): number {
  return config.options.requestsPerMinute ?? DEFAULTS.budget.requestsPerMinute;
}

/** The limits of `config` at `perMinute` (and `burst`), lowered by the service's: made once per config, service limits and rate. */
export function limitsFor(config: AccountConfig, perMinute: number, server: ServerLimits, burst = config.options.burst): BudgetLimits {
  let byServer = limitsCache.get(config);
  if (byServer === undefined) {
    byServer = new WeakMap();
    limitsCache.set(config, byServer);
  }
  let byMinute = byServer.get(server);
  if (byMinute === undefined) {
    byMinute = new Map();
    byServer.set(server, byMinute);
  }
  const name = burst === undefined ? perMinute : `${perMinute}/${burst}`;
  let limits = byMinute.get(name);
  if (limits === undefined) {
    limits = budgetLimits({ ...config.options, requestsPerMinute: perMinute, ...(burst === undefined ? {} : { burst }) }, server);
    byMinute.set(name, limits);
  }
  return limits;
}

// ---------------------------------------------------------------------------------------------------
// The sends: the minute's as times, the day's as counts per bucket.

/** How many of `times` happened in the `windowMs` before `now` (a send at `t` has left it when `t + windowMs <= now`). */
function countWithin(times: readonly number[], now: number, windowMs: number): number {
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((times[middle] ?? 0) + windowMs <= now) low = middle + 1;
    else high = middle;
  }
  return times.length - low;
}

/** When one more send fits a window of `windowMs` holding at most `limit`: once the `limit`-th latest has left it. */
function recentReadyAt(times: readonly number[], limit: number, windowMs: number): number {
  const blocking = times[times.length - limit];
  return limit >= 1 && blocking !== undefined ? blocking + windowMs : -Infinity;
}

/** The latest time a send of bucket `index` of the record may have been made. */
function bucketEnd(record: AccountRecord, index: number): number {
  return (record.dayFrom + index + 1) * DAY_BUCKET_MS;
}

/** The day's counts summed up, oldest first: every question of the day in O(log n). Made once per counts array. */
const dayIndexes = new WeakMap<readonly number[], readonly number[]>();

function cumulativeOf(record: AccountRecord): readonly number[] {
  let cumulative = dayIndexes.get(record.dayCounts);
  if (cumulative === undefined) {
    const counts = record.dayCounts;
    const sums = new Float64Array(counts.length);
    let total = 0;
    for (let index = 0; index < counts.length; index++) sums[index] = total += counts[index] ?? 0;
    cumulative = sums as unknown as readonly number[];
    dayIndexes.set(record.dayCounts, cumulative);
  }
  return cumulative;
}

/** How many of the day's buckets have ended a window of `windowMs` before `at`. */
function bucketsLeftBy(record: AccountRecord, at: number, windowMs: number): number {
  // bucketEnd(i) + windowMs <= at  ⇔  i <= (at − windowMs) / DAY_BUCKET_MS − dayFrom − 1
  const last = Math.floor((at - windowMs) / DAY_BUCKET_MS) - record.dayFrom - 1;
  let count = Math.max(0, Math.min(record.dayCounts.length, last + 1));
  // Guard the division's rounding with the comparison the rest of the budget makes.
  while (count > 0 && bucketEnd(record, count - 1) + windowMs > at) count--;
  while (count < record.dayCounts.length && bucketEnd(record, count) + windowMs <= at) count++;
  return count;
}

/** How many of the day's sends have left a window of `windowMs` by `at`. */
function dayLeftBy(record: AccountRecord, at: number, windowMs: number): number {
  const buckets = bucketsLeftBy(record, at, windowMs);
  return buckets === 0 ? 0 : (cumulativeOf(record)[buckets - 1] ?? 0);
}

function dayTotal(record: AccountRecord): number {
  const cumulative = cumulativeOf(record);
  return cumulative[cumulative.length - 1] ?? 0;
}

/** How many of the day's sends may still be in the `windowMs` before `now`. */
export function dayWithin(record: AccountRecord, now: number, windowMs: number): number {
  return dayTotal(record) - dayLeftBy(record, now, windowMs);
}

/** When one more send fits the day window holding at most `limit`: once the `limit`-th latest has left. */
function dayReadyAt(record: AccountRecord, limit: number, windowMs: number): number {
  if (limit < 1) return Infinity;
  const cumulative = cumulativeOf(record);
  const total = dayTotal(record);
  if (total < limit) return -Infinity;
  // The bucket of the limit-th latest send: the last one whose sends from it on number at least `limit`,
  // i.e. the last index with cumulative[index − 1] <= total − limit.
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if ((cumulative[middle - 1] ?? 0) <= total - limit) low = middle;
    else high = middle - 1;
  }
  return bucketEnd(record, low) + windowMs;
}

/** The day's sends with those gone that left the window by `at`. */
function dayPruned(record: AccountRecord, at: number, windowMs: number): AccountRecord {
  let drop = 0;
  while (drop < record.dayCounts.length && bucketEnd(record, drop) + windowMs <= at) drop++;
  if (drop === 0) return record;
  return { ...record, dayFrom: record.dayFrom + drop, dayCounts: record.dayCounts.slice(drop) };
}

function dayAfterSend(record: AccountRecord, now: number): Pick<AccountRecord, 'dayFrom' | 'dayCounts'> {
  const bucket = Math.floor(now / DAY_BUCKET_MS);
  if (record.dayCounts.length === 0) return { dayFrom: bucket, dayCounts: [1] };
  const last = record.dayFrom + record.dayCounts.length - 1;
  const counts = record.dayCounts.slice();
  const before = cumulativeOf(record);
  const total = before[before.length - 1] ?? 0;
  let sums: Float64Array;
  if (bucket <= last) {
    counts[counts.length - 1] = (counts[counts.length - 1] ?? 0) + 1;
    sums = Float64Array.from(before);
    sums[sums.length - 1] = total + 1;
  } else {
    for (let gap = last + 1; gap < bucket; gap++) counts.push(0);
    counts.push(1);
    // The sums go on from the old ones: a copy, not a walk of the day.
    sums = new Float64Array(counts.length);
    sums.set(before);
    sums.fill(total, before.length, counts.length - 1);
    sums[counts.length - 1] = total + 1;
  }
  dayIndexes.set(counts, sums as unknown as readonly number[]);
  return { dayFrom: record.dayFrom, dayCounts: counts };
}

// ---------------------------------------------------------------------------------------------------
// The day's pace.

/**
 * Sets the day bucket's refill from `now` to what the day sustains now (`DayBucket`, below): by our own
 * sends and when each leaves the window, and by the service's count when it says less.
 */
function repaceDay(record: AccountRecord, now: number, limits: BudgetLimits): AccountRecord {
  const windowMs = limits.dayWindowMs;
  // dayLeftBy with what does not change between the 96 slots taken out of it.
  const sums = cumulativeOf(record);
  const total = sums[sums.length - 1] ?? 0;
  const leftBy = (at: number): number => {
    const buckets = bucketsLeftBy(record, at, windowMs);
    return buckets === 0 ? 0 : (sums[buckets - 1] ?? 0);
  };
  const ours = sustainableRate({ remaining: limits.usablePerDay - (total - leftBy(now)), leftBy, now, windowMs });
  const { dayCap } = record;
  const capped = dayCap !== null && now < dayCap.until;
  const theirs = capped ? dayCap.allowance / (dayCap.until - now) : Infinity;
  const bucket = dayBucketRefilledAt(record.dayBucket ?? FULL_DAY_BUCKET, now, Math.min(ours, theirs), limits);
  if (!capped) return { ...record, dayBucket: bucket };
  // What the bucket saved at our own pace is no more than its share of what the service says is left
  // (a tenth by default): spent at once, the rest of a short day would leave polls blind until the
  // service's window resets (a ledger that lost the day's count, another process on the account).
  // But never less than one whole send while any is left: a poll waits for a whole token.
  const saved = Math.max((dayCap.allowance * limits.dayBurst) / limits.usablePerDay, Math.min(1, dayCap.allowance));
  return { ...record, dayBucket: bucket.tokens > saved ? { ...bucket, tokens: saved } : bucket };
}

/** The day at `at`: the sends that left its window go, and so does a cap that ended; either gives the day back, so its pace quickens. */
function pruneDay(record: AccountRecord, at: number, limits: BudgetLimits): AccountRecord {
  const pruned = dayPruned(record, at, limits.dayWindowMs);
  const dayCapEnded = pruned.dayCap !== null && at >= pruned.dayCap.until;
  const next = dayCapEnded ? { ...pruned, dayCap: null } : pruned;
  return next !== record ? repaceDay(next, at, limits) : record;
}

/**
 * Catches the day up with an idle spell before `now`: as if the budget had woken once a slot
 * (`DayBucket`, below) through the spell, until no send is left to leave the window or the bucket is full
 * (after either it only refills). A day's slots at most, however long the spell.
 */
function catchUpIdleDay(record: AccountRecord, now: number, limits: BudgetLimits): AccountRecord {
  if (record.dayBucket === null) return record;
  const from = record.dayBucket.at;
  const slotMs = limits.dayWindowMs / DAY_SLOTS;
  let next = record;
  for (let slot = 1; (next.dayBucket?.tokens ?? Infinity) < limits.dayBurst && next.dayCounts.length > 0 && from + slot * slotMs < now; slot++) {
    next = pruneDay(next, from + slot * slotMs, limits);
  }
  return next;
}

// ---------------------------------------------------------------------------------------------------
// The rules.

/**
 * Lets go of what `now` has made obsolete: the sends that left their windows (the day's pace set
 * again), caps that ended, identical-start marks whose spacing has passed with nothing on its way,
 * processes whose lease ran out. Returns the record and the identical-start keys now free.
 *
 * @example
 * ```ts
 * const { record: next, freed } = pruned(record, now, config);
 * ```
 */
export function pruned(record: AccountRecord, now: number, config: AccountConfig): { readonly record: AccountRecord; readonly freed: readonly string[] } {
  const limits = accountLimits(record, config);
  let next = pruneDay(catchUpIdleDay(record, now, limits), now, limits);
  const keepFrom = countWithin(next.recent, now, 2 * limits.minuteWindowMs);
  if (keepFrom < next.recent.length) next = { ...next, recent: next.recent.slice(next.recent.length - keepFrom) };
  if (next.minuteCap !== null && now >= next.minuteCap.until) next = { ...next, minuteCap: null };
  const freed: string[] = [];
  const lostAfter = config.process?.leaseMs ?? Infinity;
  for (const key in next.starts) {
    const mark = next.starts[key];
    if (mark === undefined) continue;
    // A start on its way for longer than a lease was sent by a process that died: its mark goes.
    if ((mark.inFlight === 0 && mark.at + limits.duplicateStartSpacingMs <= now) || mark.at + lostAfter <= now) freed.push(key);
  }
  if (freed.length > 0) next = { ...next, starts: without(next.starts, freed) };
  const expired: string[] = [];
  for (const id in next.processes) if ((next.processes[id]?.until ?? now) <= now) expired.push(id);
  if (expired.length > 0) next = { ...next, processes: without(next.processes, expired) };
  return { record: next, freed };
}

/**
 * When a request of `klass` may go, as far as the account goes (an identical start may wait longer,
 * see `startReadyAt`).
 *
 * @example
 * ```ts
 * readyAt(record, 'reads', now, config) <= now; // a poll may go now
 * ```
 */
export function readyAt(record: AccountRecord, klass: FairClass, now: number, config: AccountConfig): number {
  const limits = accountLimits(record, config);
  switch (klass) {
    // An execution left running spends the account's credits, so an abort takes the fastest rate the
    // service's count allows rather than the pacer's smooth one: no more than the service's own limit
    // in any of our windows (the safety margin and the day's reserve are what aborts may use), not
    // before a 429's pause ends, and ahead of a server cap's spread while that count is above zero.
    case 'abort':
      return Math.max(
        record.pausedUntil,
        capAbortReadyAt(record.minuteCap ?? undefined, now),
        capAbortReadyAt(record.dayCap ?? undefined, now),
        recentReadyAt(record.recent, limits.perMinute, limits.minuteWindowMs),
        dayReadyAt(record, limits.perDay, limits.dayWindowMs),
      );
    // A start is paced like a poll within the minute, and may take the first half of the day's
    // reserve; when even that is spent it is refused (`startRefusedUntil`), not kept waiting.
    case 'start':
      return Math.max(minuteReadyAt(record, now, limits), dayReadyAt(record, limits.startsPerDay, limits.dayWindowMs), config.process?.readyAt(record, klass, now, config, limits) ?? -Infinity);
    case 'interactive':
    case 'reads':
      return Math.max(pacedReadyAt(record, now, limits), config.process?.readyAt(record, klass, now, config, limits) ?? -Infinity);
    default:
      return unreachable(klass);
  }
}

/** When polls and interactive calls may go: the minute's limits, the day's count, its bucket and the service's cap. */
function pacedReadyAt(record: AccountRecord, now: number, limits: BudgetLimits): number {
  return Math.max(
    minuteReadyAt(record, now, limits),
    capReadyAt(record.dayCap ?? undefined, now),
    dayReadyAt(record, limits.usablePerDay, limits.dayWindowMs),
    dayBucketReadyAt(record.dayBucket ?? FULL_DAY_BUCKET, now, limits),
  );
}

/** The minute's limits for everything paced: the pacer, a 429's pause, the service's cap, our count. */
function minuteReadyAt(record: AccountRecord, now: number, limits: BudgetLimits): number {
  return Math.max(
    pacerReadyAt(record.tat, limits),
    record.pausedUntil,
    capReadyAt(record.minuteCap ?? undefined, now),
    // The pacer bounds every minute-long window of paced sends; aborts are not paced, so every
    // window is also bounded by counting (service.md §2.1).
    recentReadyAt(record.recent, limits.usablePerMinute, limits.minuteWindowMs),
  );
}

/**
 * When an identical start of `key` may be sent: at once without a mark, never (`Infinity`: wait for
 * the answer) while an identical start is on its way, else the spacing after the last one.
 *
 * @example
 * ```ts
 * startReadyAt(record, 'c-1 {}', config); // -Infinity: no identical start recently
 * ```
 */
export function startReadyAt(record: AccountRecord, key: string, config: AccountConfig): number {
  const mark = record.starts[key];
  if (mark === undefined) return -Infinity;
  return mark.inFlight > 0 ? Infinity : mark.at + accountLimits(record, config).duplicateStartSpacingMs;
}

/**
 * When the next identical-start mark may be forgotten (a key freed), if any: its spacing after its
 * answer, or — a start on its way in a shared account, whose answer may never come here (another
 * process sent it, or died) — a lease after it was sent, as `pruned` forgets it.
 */
export function nextMarkExpiryAt(record: AccountRecord, config: AccountConfig): number | undefined {
  const spacing = accountLimits(record, config).duplicateStartSpacingMs;
  const lostAfter = config.process?.leaseMs ?? Infinity;
  let next = Infinity;
  for (const mark of Object.values(record.starts)) next = Math.min(next, mark.inFlight === 0 ? mark.at + spacing : mark.at + lostAfter);
  return Number.isFinite(next) ? next : undefined;
}

/**
 * Until when a start is refused because the day is spent for starts — by our count, or by the
 * service's (another process used it) — or `undefined` when a start may go today.
 *
 * @example
 * ```ts
 * startRefusedUntil(record, now, config); // undefined: a start may go today
 * ```
 */
export function startRefusedUntil(record: AccountRecord, now: number, config: AccountConfig): number | undefined {
  const limits = accountLimits(record, config);
  const byCount = dayReadyAt(record, limits.startsPerDay, limits.dayWindowMs);
  const byServer = capStartRefusedUntil(record.dayCap ?? undefined, now, limits.perDay - limits.startsPerDay) ?? -Infinity;
  const until = Math.max(byCount, byServer);
  return until > now ? until : undefined;
}

/**
 * The record after a request of `klass` was let through at `now` (`startKey` for a start).
 *
 * @example
 * ```ts
 * record = afterSend(record, 'reads', undefined, now, config);
 * ```
 */
export function afterSend(record: AccountRecord, klass: FairClass, startKey: string | undefined, now: number, config: AccountConfig): AccountRecord {
  const limits = accountLimits(record, config);
  let next: AccountRecord = {
    ...record,
    at: Math.max(record.at, now),
    dayBucket: dayBucketAfterSend(record.dayBucket ?? FULL_DAY_BUCKET, now, limits),
    tat: pacerAfterSend(record.tat, now, limits),
    recent: [...record.recent, now],
    ...dayAfterSend(record, now),
    lastSendAt: now,
    minuteCap: capAfterSend(record.minuteCap ?? undefined, now) ?? null,
    dayCap: capAfterSend(record.dayCap ?? undefined, now) ?? null,
  };
  next = repaceDay(next, now, limits);
  if (startKey !== undefined) next = marked(next, startKey, now, 'sent');
  return config.process?.afterSend(next, klass, now, config, limits) ?? next;
}

function marked(record: AccountRecord, key: string, now: number, event: 'sent' | 'answered'): AccountRecord {
  const mark = record.starts[key] ?? { inFlight: 0, at: now };
  const inFlight = event === 'sent' ? mark.inFlight + 1 : Math.max(0, mark.inFlight - 1);
  return { ...record, starts: { ...record.starts, [key]: { inFlight, at: Math.max(mark.at, now) } } };
}

/**
 * The record after an answer arrived at `now`. Everything is anchored on the request's send time: the
 * service's window that counted it opened at most 60 s before it arrived, and it arrived within the
 * latency allowance of its send, so that window has reset by send + 60 s + allowance (our window).
 *
 * - `X-RateLimit-Limit-RPM` / `-Daily` lower than configured lower the limits: the account's limit is
 *   the service's to say (service.md §2.1).
 * - `X-RateLimit-Remaining-RPM` / `-Daily` lower than our own sends explain means someone else uses
 *   the account (service.md §2.1): a cap spreads what is left over the time until that window has
 *   reset (per day through the day's bucket, which then saves no more than its share of what is left;
 *   with none left for polls, looks spend at most half the reserve, one a minute once the service says
 *   none is left at all). A later report that shows no gap lifts the cap: the latest answer is the freshest count.
 * - A 429 pauses everything until that window has reset, or for the throttler's `Retry-After`
 *   (service.md §1.3), then resumes at the steady pace with an empty bucket: no burst.
 *
 * @example
 * ```ts
 * record = afterReport(record, { sentAt: 900, inFlight: 0, httpStatus: 200, rateLimit: { remainingPerMinute: 12 } }, now, config);
 * ```
 */
export function afterReport(record: AccountRecord, answer: AccountAnswer, now: number, config: AccountConfig): AccountRecord {
  const { rateLimit } = answer;
  let next: AccountRecord = { ...record, at: Math.max(record.at, now), serverLimits: lowerServerLimits(record.serverLimits, rateLimit) };
  const limits = accountLimits(next, config);
  const sentAt = answer.sentAt ?? now;
  const answered = answer.httpStatus !== undefined && answer.httpStatus >= 200 && answer.httpStatus < 300;
  const scopes = [
    { scope: 'minute', remaining: rateLimit.remainingPerMinute, limit: limits.perMinute, reserve: limits.perMinute - limits.usablePerMinute, windowMs: limits.minuteWindowMs, spread: true },
    { scope: 'day', remaining: rateLimit.remainingPerDay, limit: limits.perDay, reserve: limits.dayReserve, windowMs: limits.dayWindowMs, spread: false },
  ] as const;
  for (const { scope, remaining, limit, reserve, windowMs, spread } of scopes) {
    if (remaining === undefined || next.ignoring[scope]) continue;
    const capField = scope === 'minute' ? 'minuteCap' : 'dayCap';
    // A request sent once the service's "0 remaining" had run its course, answered with success and
    // "0 remaining" again, shows the count means nothing (a server stuck at 0): stop following it
    // rather than stall every request for ever. A 429 still pauses.
    if (answered && remaining === 0 && next.zeroUntil[scope] > NEVER && sentAt >= next.zeroUntil[scope]) {
      next = { ...next, ignoring: { ...next.ignoring, [scope]: true }, [capField]: null };
      continue;
    }
    const window = now - sentAt + windowMs;
    const ours = scope === 'minute' ? countWithin(next.recent, now, window) : dayWithin(next, now, window);
    const explained = limit - ours;
    // The day is too long to wait blind: with nothing left for polls, one looks again after each
    // minute's window (more seldom while the reserve is left: see serverCap), never a whole day later.
    const lookEvery = scope === 'day' ? { lookEveryMs: limits.minuteWindowMs } : {};
    const cap = remaining < explained ? serverCap({ sentAt, now, inFlight: answer.inFlight, lastSendAt: next.lastSendAt, remaining, windowMs, reserve, spread, ...lookEvery }) : undefined;
    const zeroUntil = remaining === 0 && cap !== undefined ? (cap.look?.at ?? cap.until) : NEVER;
    next = { ...next, zeroUntil: { ...next.zeroUntil, [scope]: zeroUntil }, [capField]: cap ?? null };
  }
  if (answer.httpStatus === 429) {
    // Never longer than one window: the account limiter's count resets within it (service.md §2.1), and
    // a throttler asking for more (§1.3) fails the call that met it rather than holding every call.
    const resumeAt = rateLimit.retryAfterMs === undefined ? sentAt + limits.minuteWindowMs : now + Math.min(rateLimit.retryAfterMs, limits.minuteWindowMs);
    const pausedUntil = Math.max(next.pausedUntil, resumeAt);
    next = { ...next, pausedUntil, tat: pacerResumingAt(next.tat, pausedUntil, limits) };
  }
  next = { ...next, server: serverView(next.server, rateLimit, now) };
  next = repaceDay(next, now, limits);
  if (answer.startKey !== undefined) next = marked(next, answer.startKey, now, 'answered');
  return next;
}

/** A value below 1 says nothing usable and is ignored; a higher one than known is not the account's either. */
function lowerServerLimits(known: ServerLimits, rateLimit: RateLimitInfo): ServerLimits {
  const { limitPerMinute: perMinute, limitPerDay: perDay } = rateLimit;
  const minuteSays = perMinute !== undefined && perMinute >= 1 && perMinute !== known.perMinute;
  const daySays = perDay !== undefined && perDay >= 1 && perDay !== known.perDay;
  // The same object while nothing changes: the limits derived from it are cached by it.
  if (!minuteSays && !daySays) return known;
  return {
    ...known,
    ...(perMinute !== undefined && perMinute >= 1 ? { perMinute } : {}),
    ...(perDay !== undefined && perDay >= 1 ? { perDay } : {}),
  };
}

function serverView(previous: ServerView, rateLimit: RateLimitInfo, now: number): ServerView {
  const { remainingPerMinute, remainingPerDay } = rateLimit;
  if (remainingPerMinute === undefined && remainingPerDay === undefined) return previous;
  return {
    ...previous,
    ...(remainingPerMinute === undefined ? {} : { remainingPerMinute }),
    ...(remainingPerDay === undefined ? {} : { remainingPerDay }),
    at: now,
  };
}

/**
 * The pace the account can give this process's runs' reads from `now` on, per minute: the minute's
 * usable count, or less when the day is tight — its sustainable pace plus what its bucket holds,
 * spread over the next quarter hour. A process sharing the account with others gets the part of it
 * its share of the pacer makes, so that a tight day slows every run of the fleet alike. The usable
 * count is a little more than the pacer sends when saturated (95 against 88 a minute by default): a
 * run's read is due a little before its turn, so the turns, not the runs' wishes, pace the reads and
 * none goes unused for a read that was not yet due.
 *
 * @example
 * ```ts
 * readsPerMinute(record, now, config); // 95 on a fresh account
 * ```
 */
export function readsPerMinute(record: AccountRecord, now: number, config: AccountConfig): number {
  const limits = accountLimits(record, config);
  const bucket = dayBucketAt(record.dayBucket ?? FULL_DAY_BUCKET, now, limits);
  const day = bucket.perMs * 60_000 + Math.max(0, bucket.tokens) / DAY_BUCKET_SPREAD_MINUTES;
  return (config.process?.readsShare(record, now, config, limits) ?? 1) * Math.min(limits.usablePerMinute, day);
}

/** What is left of the day to polls and interactive calls at `now`: by our count, or the service's cap. */
export function pacedRemaining(record: AccountRecord, now: number, config: AccountConfig): number {
  const limits = accountLimits(record, config);
  const byCount = limits.usablePerDay - dayWithin(record, now, limits.dayWindowMs);
  const { dayCap } = record;
  return dayCap !== null && now < dayCap.until ? Math.min(byCount, dayCap.allowance) : byCount;
}

/** How many sends of the last `windowMs` the record counts: exact within two minute windows, by bucket beyond. */
export function sentWithin(record: AccountRecord, now: number, windowMs: number, config: AccountConfig): number {
  return windowMs <= 2 * accountLimits(record, config).minuteWindowMs ? countWithin(record.recent, now, windowMs) : dayWithin(record, now, windowMs);
}

/** `entries` without `keys`. */
export function without<T>(entries: Readonly<Record<string, T>>, keys: readonly string[]): Readonly<Record<string, T>> {
  const gone = new Set(keys);
  return Object.fromEntries(Object.entries(entries).filter(([key]) => !gone.has(key)));
}

function unreachable(value: never): never {
  throw new Error(`Unexpected budget class: ${String(value)}`);
}

// ---------------------------------------------------------------------------------------------------
// The minute's pacer.

/**
 * The smooth pacer: a GCRA (generic cell rate algorithm), the token bucket written as one number, the
 * theoretical arrival time `tat` of the next send at the steady pace. Why its numbers can never cause
 * a 429 is worked out on `budgetLimits`.
 *
 * @example
 * ```ts
 * let tat = IDLE_PACER;
 * if (pacerReadyAt(tat, limits) <= now) tat = pacerAfterSend(tat, now, limits);
 * ```
 */
export type Pacer = number;

/**
 * A pacer that has never sent: its full burst is available.
 *
 * @example
 * ```ts
 * pacerReadyAt(IDLE_PACER, limits); // -Infinity: send at once
 * ```
 */
export const IDLE_PACER: Pacer = -Infinity;

/**
 * When the next send conforms: `burst − 1` intervals before the theoretical arrival time.
 *
 * @example
 * ```ts
 * const wait = Math.max(0, pacerReadyAt(tat, limits) - now);
 * ```
 */
export function pacerReadyAt(tat: Pacer, limits: BudgetLimits): number {
  return tat - (limits.burst - 1) * limits.pacingIntervalMs;
}

/**
 * The pacer after a send at `now`. `tat` only ever grows, which the proof on `budgetLimits` relies on.
 *
 * @example
 * ```ts
 * tat = pacerAfterSend(tat, now, limits);
 * ```
 */
export function pacerAfterSend(tat: Pacer, now: number, limits: BudgetLimits): Pacer {
  return Math.max(tat, now) + limits.pacingIntervalMs;
}

/**
 * The pacer restarting at `resumeAt` with an empty bucket: one send at `resumeAt`, then one per
 * interval, so the end of a pause (a 429) is not followed by a burst.
 *
 * @example
 * ```ts
 * tat = pacerResumingAt(tat, pausedUntil, limits);
 * ```
 */
export function pacerResumingAt(tat: Pacer, resumeAt: number, limits: BudgetLimits): Pacer {
  return Math.max(tat, resumeAt + (limits.burst - 1) * limits.pacingIntervalMs);
}

// ---------------------------------------------------------------------------------------------------
// The service's caps.

/**
 * What the service told us about its own count, when it counts more than we sent: another process
 * shares the account (service.md §2.1), or the account's limit is lower than configured. A cap allows
 * polls and interactive calls `allowance` more sends before `until` (when the service's window can
 * have reset), at least `spacingMs` apart so they spread over that time instead of leaving at once;
 * starts and aborts may also take the reserve, down to what the service's count itself allows.
 *
 * @example
 * ```ts
 * const cap = serverCap({ remaining: 40, sentAt, now, windowMs: 62_000, reserve: 5, inFlight: 2, lastSendAt, spread: true });
 * capReadyAt(cap, now); // when the next poll may go, as far as the service's count allows
 * ```
 */
export interface ServerCap {
  readonly until: number;
  /** What polls and interactive calls may still take: the service's count less ours in flight and the reserve. */
  readonly allowance: number;
  /**
   * What the service's count itself still allows, the reserve included: an abort may use it, ahead of
   * the spread, while it is above zero (an execution left running spends credits, service.md §3.5), and a
   * start down to the part of the reserve kept for aborts.
   */
  readonly hardAllowance: number;
  readonly spacingMs: number;
  readonly notBefore: number;
  /**
   * A day with nothing left for polls cannot be waited out blind: one request may look again each
   * `everyMs` (from `at`), and its answer says whether the day has reset.
   */
  readonly look?: { readonly at: number; readonly everyMs: number };
}

/**
 * What `serverCap` needs from a report.
 *
 * @example
 * ```ts
 * const input: ServerCapInput = { remaining: 40, sentAt: 900, now: 1_000, windowMs: 62_000, reserve: 5, inFlight: 0, lastSendAt: 900, spread: true };
 * ```
 */
export interface ServerCapInput {
  /** The `X-RateLimit-Remaining-*` value of the answer. */
  readonly remaining: number;
  /** When the answered request was sent. */
  readonly sentAt: number;
  /** When the answer came. */
  readonly now: number;
  /** Our window: the service's plus the latency allowance. */
  readonly windowMs: number;
  /** Requests polls leave unused (the minute's safety margin, the day's reserve). */
  readonly reserve: number;
  /** Our other requests on their way, which the service may not have counted yet. */
  readonly inFlight: number;
  readonly lastSendAt: number;
  /** Spread the allowance over the window (per minute) or only stop at zero (per day, too long to spread). */
  readonly spread: boolean;
  /**
   * With nothing left for polls, how long until one may look again (per day: a minute's window), at the
   * least: while the reserve is left, looks are spread so as to spend no more than half of it.
   */
  readonly lookEveryMs?: number;
}

/** The longest a look waits, in look periods (per day: a quarter of an hour), while the reserve is left. */
const LOOK_PERIODS_AT_MOST = 15;

/**
 * The cap a report imposes. The service's window that counted the request began at or before the
 * request arrived, which was within the latency allowance of `sentAt`, so that window has reset by
 * `sentAt + windowMs`; until then at most `remaining` requests are left, minus ours already on their
 * way and, for polls, the reserve.
 *
 * @example
 * ```ts
 * serverCap({ remaining: 40, sentAt: 0, now: 0, windowMs: 62_000, reserve: 5, inFlight: 0, lastSendAt: 0, spread: true }).spacingMs; // 1_771.4…
 * ```
 */
export function serverCap(input: ServerCapInput): ServerCap {
  const until = input.sentAt + input.windowMs;
  const hardAllowance = Math.max(0, input.remaining - input.inFlight);
  const allowance = Math.max(0, hardAllowance - input.reserve);
  const spacingMs = input.spread && allowance > 0 ? Math.max(0, until - input.now) / allowance : 0;
  const cap = { until, allowance, hardAllowance, spacingMs, notBefore: input.lastSendAt + spacingMs };
  if (allowance > 0 || input.lookEveryMs === undefined) return cap;
  // A look spends what the service says is left, which is then the reserve kept for aborts and starts:
  // looks take at most half of it, spread until the window has surely reset, but never more than
  // LOOK_PERIODS_AT_MOST periods apart (a small reserve is spent sooner rather than a day waited blind).
  // With nothing left at all (the day is spent), one looks each period.
  const spreadMs = Math.max(0, until - input.now) / Math.max(1, Math.floor(hardAllowance / 2));
  const everyMs = hardAllowance === 0 ? input.lookEveryMs : Math.min(LOOK_PERIODS_AT_MOST * input.lookEveryMs, Math.max(input.lookEveryMs, spreadMs));
  return { ...cap, look: { at: Math.min(until, input.sentAt + everyMs), everyMs } };
}

/**
 * The earliest time the cap lets a poll or interactive call go: at once when it has expired, one
 * spacing after the previous send while its allowance lasts, then at the next look or at `until`.
 *
 * @example
 * ```ts
 * capReadyAt(undefined, now); // -Infinity: no cap
 * ```
 */
export function capReadyAt(cap: ServerCap | undefined, now: number): number {
  if (cap === undefined || now >= cap.until) return -Infinity;
  return cap.allowance > 0 ? cap.notBefore : (cap.look?.at ?? cap.until);
}

/**
 * The earliest time the cap lets an abort go: at once while the service's count allows one more
 * request (reserve included, no spacing), otherwise at the next look or when the window has reset.
 *
 * ```ts
 * capAbortReadyAt(cap, now) <= capReadyAt(cap, now); // an abort never waits longer than another request
 * ```
 */
export function capAbortReadyAt(cap: ServerCap | undefined, now: number): number {
  if (cap === undefined || now >= cap.until || cap.hardAllowance > 0) return -Infinity;
  return cap.look?.at ?? cap.until;
}

/**
 * Until when the cap refuses a start: while the service's count leaves no more than `keptForAborts`,
 * up to `until` (the service's window can have reset by then); `undefined` when a start may go.
 *
 * @example
 * ```ts
 * capStartRefusedUntil(dayCap, now, limits.perDay - limits.startsPerDay); // the day is spent for starts until then
 * ```
 */
export function capStartRefusedUntil(cap: ServerCap | undefined, now: number, keptForAborts: number): number | undefined {
  if (cap === undefined || now >= cap.until || cap.hardAllowance > keptForAborts) return undefined;
  return cap.until;
}

/**
 * The cap after a send at `now`; `undefined` once it has expired. A send at or after the look moves
 * the next look one period on: one request looks per period.
 *
 * @example
 * ```ts
 * cap = capAfterSend(cap, now);
 * ```
 */
export function capAfterSend(cap: ServerCap | undefined, now: number): ServerCap | undefined {
  if (cap === undefined || now >= cap.until) return undefined;
  const spent = { ...cap, allowance: Math.max(0, cap.allowance - 1), hardAllowance: Math.max(0, cap.hardAllowance - 1), notBefore: now + cap.spacingMs };
  return cap.look === undefined || now < cap.look.at ? spent : { ...spent, look: { at: now + cap.look.everyMs, everyMs: cap.look.everyMs } };
}

// ---------------------------------------------------------------------------------------------------
// The day's bucket.

/**
 * How the day is spent (so that a service that runs all day is never blind): a token bucket with
 * real capacity whose refill is what the day can sustain from now on.
 *
 * - The capacity, `dayBurst` (default a tenth of the usable day, 950), is what sporadic use spends at
 *   the minute's pace: after a quiet spell nothing slows it until then.
 * - The refill is the sustainable rate: what is left of the usable day, divided by the time until the
 *   day window gives back enough for it — the largest constant rate at which the window never reaches
 *   the usable day, given when each of our sends of the last day leaves it (`sustainableRate`). With
 *   nothing sent for a day that is the usable day per day window; after a morning's batch, what the
 *   batch left spread until the batch leaves the window; in sustained use it converges to the usable
 *   day per window, evenly. When the service's count says less (another process on the account, a
 *   ledger that lost the day's count), its remaining spread until its window can have reset, if lower,
 *   and the bucket then holds no more than its share (`dayBurst`) of that remaining.
 * - Every send takes a token — starts and aborts too, which do not wait for one (they take what is
 *   saved, never more: their sends already slow the refill) — and a poll or an interactive call goes
 *   on a whole token. The refill is computed
 *   again after every send, every send that leaves the window and every answer (after an idle spell, as
 *   if the budget had woken once a slot through it), so what was saved in the bucket never exceeds what
 *   that constant rate would have sent: polls never run into the end of the usable day (and so never
 *   into the reserve, which its count also keeps them from), and are never blind while any of it is left.
 *
 * The window is a sliding one, as for the minute: the service's day starts at whichever request comes
 * first (service.md §2.1), maybe another process's, so only a pace that is safe wherever it starts is safe.
 *
 * @example
 * ```ts
 * let bucket: DayBucket = FULL_DAY_BUCKET;
 * if (dayBucketReadyAt(bucket, now, limits) <= now) bucket = dayBucketAfterSend(bucket, now, limits);
 * ```
 */
export interface DayBucket {
  /** Whole and partial tokens as of `at`, from 0 to the capacity. */
  readonly tokens: number;
  readonly at: number;
  /** The refill in force since `at`, in tokens per ms. */
  readonly perMs: number;
}

/**
 * A bucket that has sent nothing yet: full, whatever the capacity.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(FULL_DAY_BUCKET, now, limits); // -Infinity: send at once
 * ```
 */
export const FULL_DAY_BUCKET: DayBucket = { tokens: Infinity, at: -Infinity, perMs: 0 };

/**
 * The day window cut into this many slots when finding the sustainable rate: 15 minutes each, so
 * finding it costs 96 binary searches of the send log, and errs low by at most a slot's departures.
 */
export const DAY_SLOTS = 96;

/**
 * The largest constant rate (per ms) from `now` at which the day window never holds more than the
 * usable day, `remaining` being what is left of it now and `leftBy(at)` how many of the window's sends
 * have left it by `at`. By then `remaining + leftBy(at)` may have been sent, so the rate is the least of
 * those over the time they take; each slot counts only what has left by its start (a lower bound).
 *
 * @example
 * ```ts
 * sustainableRate({ remaining: 9_500, leftBy: () => 0, now, windowMs: 86_402_000 }) * 60_000; // ≈ 6.6 a minute
 * ```
 */
export function sustainableRate(input: { readonly remaining: number; readonly leftBy: (at: number) => number; readonly now: number; readonly windowMs: number }): number {
  if (input.remaining <= 0) return 0;
  const slotMs = input.windowMs / DAY_SLOTS;
  let rate = Infinity;
  for (let slot = 1; slot <= DAY_SLOTS; slot++) {
    const freed = input.leftBy(input.now + (slot - 1) * slotMs);
    rate = Math.min(rate, (input.remaining + freed) / (slot * slotMs));
  }
  return rate;
}

/**
 * The bucket refilled up to `now` at the rate in force.
 *
 * @example
 * ```ts
 * dayBucketAt(bucket, now, limits).tokens; // what may go at once
 * ```
 */
export function dayBucketAt(bucket: DayBucket, now: number, limits: BudgetLimits): DayBucket {
  const refill = bucket.perMs > 0 && now > bucket.at ? (now - bucket.at) * bucket.perMs : 0;
  return { tokens: Math.min(limits.dayBurst, bucket.tokens + refill), at: Math.max(now, bucket.at), perMs: bucket.perMs };
}

/**
 * The bucket from `now` on refilled at `perMs` (what it held until `now` filled at the old rate).
 *
 * @example
 * ```ts
 * bucket = dayBucketRefilledAt(bucket, now, sustainableRate(input), limits);
 * ```
 */
export function dayBucketRefilledAt(bucket: DayBucket, now: number, perMs: number, limits: BudgetLimits): DayBucket {
  return { ...dayBucketAt(bucket, now, limits), perMs: Math.max(0, perMs) };
}

/**
 * When the day lets the next poll or interactive call go: once a whole token is there. With no refill
 * it defers to the day's count and the service's cap, which say when something frees up.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(bucket, now, limits) <= now; // the day allows a poll now
 * ```
 */
export function dayBucketReadyAt(bucket: DayBucket, now: number, limits: BudgetLimits): number {
  const { tokens, perMs } = dayBucketAt(bucket, now, limits);
  // A token refilled in pieces can miss 1 by a rounding error: that is a whole token.
  if (tokens >= 1 - 1e-9 || perMs <= 0) return -Infinity;
  return now + (1 - tokens) / perMs;
}

/**
 * The bucket after a send at `now`, of any class: a token less, or none left when a start or an abort
 * went without a whole one.
 *
 * @example
 * ```ts
 * bucket = dayBucketAfterSend(bucket, now, limits);
 * ```
 */
export function dayBucketAfterSend(bucket: DayBucket, now: number, limits: BudgetLimits): DayBucket {
  const refilled = dayBucketAt(bucket, now, limits);
  return { ...refilled, tokens: Math.max(0, refilled.tokens - 1) };
}

/**
 * When the bucket would be empty, and polls down to the sustainable pace, if the last hour's pace went
 * on (`sentLastHour`); `undefined` when the refill keeps up with it.
 *
 * @example
 * ```ts
 * dayBucketEmptyAt(bucket, now, sentLastHour, limits); // a time, or undefined
 * ```
 */
export function dayBucketEmptyAt(bucket: DayBucket, now: number, sentLastHour: number, limits: BudgetLimits): number | undefined {
  const { tokens, perMs } = dayBucketAt(bucket, now, limits);
  const drainPerHour = sentLastHour - perMs * HOUR_MS;
  if (drainPerHour <= 0) return undefined;
  return now + (Math.max(0, tokens) / drainPerHour) * HOUR_MS;
}

const HOUR_MS = 3_600_000;
