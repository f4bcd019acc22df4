import type { ServerView } from '../domain/budget.js';
import { DEFAULTS } from '../domain/options.js';
import type { RequestBudgetOptions } from '../domain/options.js';
import type { GateTicket, RateLimitInfo } from '../domain/requests.js';
import { DAY_SLOTS, dayBucketAfterSend, dayBucketAt, dayBucketReadyAt, dayBucketRefilledAt, FULL_DAY_BUCKET, sustainableRate } from './day-pacing.js';
import type { DayBucket } from './day-pacing.js';
import type { FairClass } from './fair-queue.js';
import { budgetLimits } from './limits.js';
import type { BudgetLimits, ServerLimits } from './limits.js';
import { pacerAfterSend, pacerReadyAt, pacerResumingAt } from './pacing.js';
import { capAbortReadyAt, capAfterSend, capReadyAt, capStartRefusedUntil, serverCap } from './server-cap.js';
import type { ServerCap } from './server-cap.js';

/**
 * The account's rule book: everything the budget knows of the account, whoever's requests they are,
 * as one small JSON record, and the account's rules as pure functions over it — `(record, event, now,
 * config) → record'` and questions such as "when may a request of this class go". The same functions
 * run in memory and against Redis (where a ledger reads the record, applies them and writes it back
 * atomically): the rules are written once.
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
 * has waiting to read, and the pacers of its share of the reads and of its own lower limit.
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
  /** The pacer's theoretical arrival time (pacing.ts). */
  readonly tat: number;
  /** The times of the sends of the last two minute windows, oldest first. */
  readonly recent: readonly number[];
  /** The day's sends per bucket of `DAY_BUCKET_MS`: `dayCounts[i]` in bucket `dayFrom + i`. */
  readonly dayFrom: number;
  readonly dayCounts: readonly number[];
  /** The day's bucket (day-pacing.ts); `null` while nothing was sent: full. */
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
 * How one process applies the rules: its configured numbers and, when the account is shared, its id
 * and lease.
 *
 * @example
 * ```ts
 * const config: AccountConfig = { options: { requestsPerMinute: 60 }, process: { id: 'p-1', leaseMs: 124_000 } };
 * ```
 */
export interface AccountConfig {
  readonly options: RequestBudgetOptions;
  readonly process?: { readonly id: string; readonly leaseMs: number };
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

/** Over how many minutes the day bucket's tokens are planned to be spent when runs poll (`readsPerMinute`). */
const HEADROOM_HORIZON_MINUTES = 15;

/**
 * Slack of a process's share of the reads when several share the account: the shares add up to a
 * little less than the pacer's pace, so the processes seldom race for the same slot.
 */
const SHARE_SLACK = 1.1;

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
 * account is paced by it, a process configured lower is held to its own by `ownLimits`), lowered by
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

/** This process's own limits: its configured numbers, lowered by the service's. */
export function ownLimits(record: AccountRecord, config: AccountConfig): BudgetLimits {
  return limitsFor(config, configuredPerMinute(config), record.serverLimits);
}

function configuredPerMinute(config: AccountConfig): number {
  return config.options.requestsPerMinute ?? DEFAULTS.budget.requestsPerMinute;
}

function limitsFor(config: AccountConfig, perMinute: number, server: ServerLimits, burst = config.options.burst): BudgetLimits {
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
  return limit >= 1 && blocking !== undefined ? blocking + windowMs : Number.NEGATIVE_INFINITY;
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
  if (limit < 1) return Number.POSITIVE_INFINITY;
  const cumulative = cumulativeOf(record);
  const total = dayTotal(record);
  if (total < limit) return Number.NEGATIVE_INFINITY;
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
  const counts = [...record.dayCounts];
  if (bucket <= last) counts[counts.length - 1] = (counts[counts.length - 1] ?? 0) + 1;
  else {
    for (let gap = last + 1; gap < bucket; gap++) counts.push(0);
    counts.push(1);
  }
  return { dayFrom: record.dayFrom, dayCounts: counts };
}

// ---------------------------------------------------------------------------------------------------
// The day's pace.

/**
 * Sets the day bucket's refill from `now` to what the day sustains now (day-pacing.ts): by our own
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
  const theirs = dayCap !== null && now < dayCap.until ? dayCap.allowance / (dayCap.until - now) : Number.POSITIVE_INFINITY;
  return { ...record, dayBucket: dayBucketRefilledAt(record.dayBucket ?? FULL_DAY_BUCKET, now, Math.min(ours, theirs), limits) };
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
 * (day-pacing.ts) through the spell, until no send is left to leave the window or the bucket is full
 * (after either it only refills). A day's slots at most, however long the spell.
 */
function catchUpIdleDay(record: AccountRecord, now: number, limits: BudgetLimits): AccountRecord {
  if (record.dayBucket === null) return record;
  const from = record.dayBucket.at;
  const slotMs = limits.dayWindowMs / DAY_SLOTS;
  let next = record;
  for (let slot = 1; (next.dayBucket?.tokens ?? Number.POSITIVE_INFINITY) < limits.dayBurst && next.dayCounts.length > 0 && from + slot * slotMs < now; slot++) {
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
  const lostAfter = config.process?.leaseMs ?? Number.POSITIVE_INFINITY;
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
      return Math.max(minuteReadyAt(record, now, config, limits), dayReadyAt(record, limits.startsPerDay, limits.dayWindowMs));
    case 'interactive':
      return pacedReadyAt(record, now, config, limits);
    case 'reads':
      return Math.max(pacedReadyAt(record, now, config, limits), shareReadyAt(record, config, limits));
    default:
      return unreachable(klass);
  }
}

/** When polls and interactive calls may go: the minute's limits, the day's count, its bucket and the service's cap. */
function pacedReadyAt(record: AccountRecord, now: number, config: AccountConfig, limits: BudgetLimits): number {
  return Math.max(
    minuteReadyAt(record, now, config, limits),
    capReadyAt(record.dayCap ?? undefined, now),
    dayReadyAt(record, limits.usablePerDay, limits.dayWindowMs),
    dayBucketReadyAt(record.dayBucket ?? FULL_DAY_BUCKET, now, limits),
  );
}

/** The minute's limits for everything paced: the pacer (and this process's own, when lower), a 429's pause, the service's cap, our count. */
function minuteReadyAt(record: AccountRecord, now: number, config: AccountConfig, limits: BudgetLimits): number {
  const own = ownLimits(record, config);
  const entry = config.process === undefined ? undefined : record.processes[config.process.id];
  return Math.max(
    pacerReadyAt(record.tat, limits),
    own.perMinute < limits.perMinute && entry !== undefined ? pacerReadyAt(entry.ownTat, own) : Number.NEGATIVE_INFINITY,
    record.pausedUntil,
    capReadyAt(record.minuteCap ?? undefined, now),
    // The pacer bounds every minute-long window of paced sends; aborts are not paced, so every
    // window is also bounded by counting (service.md §2.1).
    recentReadyAt(record.recent, limits.usablePerMinute, limits.minuteWindowMs),
  );
}

/**
 * When several live processes have runs waiting to read, each process's reads get the share of the
 * pace its waiting runs make of the account's, so every run is read about as often whichever process
 * holds it. Returns the interval between this process's reads (kept up while it reads alone too, so
 * that its turns are known when another process comes), or `undefined` for a process alone in memory.
 */
function readShare(record: AccountRecord, config: AccountConfig, limits: BudgetLimits): { readonly intervalMs: number; readonly alone: boolean; readonly sharing: boolean } | undefined {
  const id = config.process?.id;
  if (id === undefined) return undefined;
  const entries = Object.entries(record.processes).filter(([name, entry]) => entry.demand > 0 || name === id);
  const pace = 1 / (SHARE_SLACK * limits.pacingIntervalMs);
  // Processes held to a lower limit of their own take what it allows; the others share the rest by
  // their demand (water-filling).
  const open = new Map(entries.map(([name, entry]) => [name, { weight: Math.max(1, entry.demand), cap: entry.perMinute < limits.perMinute ? 1 / limitsFor(config, entry.perMinute, record.serverLimits).pacingIntervalMs : Number.POSITIVE_INFINITY }]));
  let left = pace;
  for (let settled = false; !settled; ) {
    settled = true;
    let weight = 0;
    for (const entry of open.values()) weight += entry.weight;
    for (const [name, entry] of open) {
      if ((left * entry.weight) / weight > entry.cap) {
        if (name === id) return { intervalMs: 1 / entry.cap, alone: false, sharing: true };
        left -= entry.cap;
        open.delete(name);
        settled = false;
        break;
      }
    }
  }
  let weight = 0;
  for (const entry of open.values()) weight += entry.weight;
  const mine = open.get(id)?.weight ?? 1;
  return { intervalMs: weight / (Math.max(left, 1e-12) * mine), alone: entries.length <= 1, sharing: entries.length > 1 };
}

/** When this process's share lets its next read go: only while other processes have runs waiting to read too. */
function shareReadyAt(record: AccountRecord, config: AccountConfig, limits: BudgetLimits): number {
  const share = readShare(record, config, limits);
  const entry = config.process === undefined ? undefined : record.processes[config.process.id];
  if (share === undefined || !share.sharing || entry === undefined) return Number.NEGATIVE_INFINITY;
  // A burst of its own would let a few-run process bank turns while the many-run ones wait.
  return entry.readTat - ((share.alone ? limits.burst : 1) - 1) * share.intervalMs;
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
  if (mark === undefined) return Number.NEGATIVE_INFINITY;
  return mark.inFlight > 0 ? Number.POSITIVE_INFINITY : mark.at + accountLimits(record, config).duplicateStartSpacingMs;
}

/** When the next identical-start mark may be forgotten (a key freed), if any. */
export function nextMarkExpiryAt(record: AccountRecord, config: AccountConfig): number | undefined {
  const spacing = accountLimits(record, config).duplicateStartSpacingMs;
  let next = Number.POSITIVE_INFINITY;
  for (const mark of Object.values(record.starts)) if (mark.inFlight === 0) next = Math.min(next, mark.at + spacing);
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
  const byServer = capStartRefusedUntil(record.dayCap ?? undefined, now, limits.perDay - limits.startsPerDay) ?? Number.NEGATIVE_INFINITY;
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
  const id = config.process?.id;
  const entry = id === undefined ? undefined : next.processes[id];
  if (id !== undefined && entry !== undefined) {
    const own = ownLimits(next, config);
    const share = klass === 'reads' ? readShare(next, config, limits) : undefined;
    // A process that came late for its turn (a busy machine, a timer fired late) keeps up to one turn of it.
    const readTat = share === undefined ? entry.readTat : (entry.readTat === NEVER ? now : Math.max(entry.readTat, now - share.intervalMs)) + share.intervalMs;
    const ownTat = own.perMinute < limits.perMinute && klass !== 'abort' ? pacerAfterSend(entry.ownTat, now, own) : entry.ownTat;
    next = { ...next, processes: { ...next.processes, [id]: { ...entry, readTat, ownTat } } };
  }
  return next;
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
 *   reset (per day: it only stops at zero, a day being too long to spread over, and then looks again
 *   each minute). A later report that shows no gap lifts the cap: the latest answer is the freshest count.
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
    // minute's window, never a whole day later.
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
 * The record with this process's lease renewed (and its runs waiting to read, when `demand` is
 * given); unchanged for a process alone in memory.
 *
 * @example
 * ```ts
 * record = joined(record, now, config, 4);
 * ```
 */
export function joined(record: AccountRecord, now: number, config: AccountConfig, demand?: number): AccountRecord {
  const process = config.process;
  if (process === undefined) return record;
  const own = ownLimits(record, config);
  const entry = record.processes[process.id] ?? { until: now, perMinute: own.perMinute, burst: own.burst, demand: 0, readTat: NEVER, ownTat: NEVER };
  const renewed = { ...entry, until: now + process.leaseMs, perMinute: configuredPerMinute(config), burst: config.options.burst ?? own.burst, demand: demand ?? entry.demand };
  return { ...record, at: Math.max(record.at, now), processes: { ...record.processes, [process.id]: renewed } };
}

/**
 * The record without this process: its share of the reads goes to the others at once.
 *
 * @example
 * ```ts
 * record = left(record, config);
 * ```
 */
export function left(record: AccountRecord, config: AccountConfig): AccountRecord {
  const id = config.process?.id;
  if (id === undefined || record.processes[id] === undefined) return record;
  return { ...record, processes: without(record.processes, [id]) };
}

/**
 * A process that knew the record by another epoch sees that the store lost the account (a restart
 * without persistence): what was sent in this window is unknown, so nothing goes for a window rather
 * than a burst into a window the service still counts. Once per record.
 *
 * @example
 * ```ts
 * record = checkedEpoch(record, knownEpoch, now, config);
 * ```
 */
export function checkedEpoch(record: AccountRecord, knownEpoch: string | undefined, now: number, config: AccountConfig): AccountRecord {
  if (knownEpoch === undefined || knownEpoch === record.epoch || record.lossSeen) return record;
  const limits = accountLimits(record, config);
  const pausedUntil = Math.max(record.pausedUntil, now + limits.minuteWindowMs);
  return { ...record, lossSeen: true, pausedUntil, tat: pacerResumingAt(record.tat, pausedUntil, limits) };
}

/**
 * One request's turn, as a shared store takes it in one atomic step: the record pruned, this
 * process's lease and demand renewed, then the verdict — refused (a start the day cannot take),
 * wait until a time, or granted, the send counted.
 *
 * @example
 * ```ts
 * const { record: next, verdict } = requested(record, { klass: 'reads', demand: 3 }, now, config);
 * ```
 */
export function requested(
  record: AccountRecord,
  request: { readonly klass: FairClass; readonly startKey?: string | undefined; readonly demand: number },
  now: number,
  config: AccountConfig,
): { readonly record: AccountRecord; readonly verdict: Verdict } {
  const next = joined(pruned(record, now, config).record, now, config, request.klass === 'reads' ? request.demand : undefined);
  if (request.klass === 'start') {
    const refusedUntil = startRefusedUntil(next, now, config);
    if (refusedUntil !== undefined) return { record: next, verdict: { verdict: 'refused', at: refusedUntil } };
  }
  const at = Math.max(readyAt(next, request.klass, now, config), request.startKey === undefined ? Number.NEGATIVE_INFINITY : startReadyAt(next, request.startKey, config));
  if (at > now) return { record: next, verdict: { verdict: 'wait', at } };
  return { record: afterSend(next, request.klass, request.startKey, now, config), verdict: { verdict: 'granted' } };
}

/**
 * The pace the account can give the runs' reads from `now` on, per minute: the minute's usable
 * count, or less when the day is tight — its sustainable pace plus what its bucket holds, spread
 * over the next quarter hour.
 *
 * @example
 * ```ts
 * readsPerMinute(record, now, config); // 95 on a fresh account
 * ```
 */
export function readsPerMinute(record: AccountRecord, now: number, config: AccountConfig): number {
  const limits = accountLimits(record, config);
  const bucket = dayBucketAt(record.dayBucket ?? FULL_DAY_BUCKET, now, limits);
  const share = readShare(record, config, limits);
  const usable = share === undefined || !share.sharing ? limits.usablePerMinute : Math.min(limits.usablePerMinute, 60_000 / share.intervalMs);
  return Math.min(usable, bucket.perMs * 60_000 + Math.max(0, bucket.tokens) / HEADROOM_HORIZON_MINUTES);
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
function without<T>(entries: Readonly<Record<string, T>>, keys: readonly string[]): Readonly<Record<string, T>> {
  const gone = new Set(keys);
  return Object.fromEntries(Object.entries(entries).filter(([key]) => !gone.has(key)));
}

function unreachable(value: never): never {
  throw new Error(`Unexpected budget class: ${String(value)}`);
}
