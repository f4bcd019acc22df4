import {
  accountLimits,
  afterSend,
  configuredPerMinute,
  limitsFor,
  NEVER,
  pacerAfterSend,
  pacerReadyAt,
  pacerResumingAt,
  pruned,
  readyAt,
  startReadyAt,
  startRefusedUntil,
  without,
} from './account-rules.js';
import type { AccountConfig, AccountProcess, AccountRecord, BudgetLimits, ProcessEntry, Verdict } from './account-rules.js';
import type { FairClass } from './fair-queue.js';

/*
 * The rule book's chapter for an account that several processes share through a store (Redis): each
 * process's lease, its share of the reads, its own lower limit and the claims of its starts and aborts
 * on the account's pace. The rule book's functions (account-rules.ts) apply these on behalf of the
 * process their config names (`AccountConfig.process`), in memory and in Redis alike; a budget alone in
 * memory names none, so only a shared budget loads this file.
 */

/**
 * How many of its turns a process with runs waiting to read may miss before its share of the reads is
 * lent to the others (`readShare`): a turn or so is the jitter of a busy machine, more is a process
 * that is not reading (killed, stalled, its runs not due).
 */
const LEND_AFTER_TURNS = 2;

/**
 * How long a start's or abort's claim outlives the slot it waits for: the pacer's burst. The process
 * asks again at that slot (a busy machine's process a little late); one that stalls or dies lets the
 * others read again after this, and the burst the pacer saved meanwhile gives them back those slots.
 */
const claimLeaseMs = (limits: BudgetLimits): number => limits.burst * limits.pacingIntervalMs;

/**
 * One process of a shared account: its id in the account's record, its lease (a process killed with
 * -9 is forgotten after it) and the rules that concern it.
 *
 * @example
 * ```ts
 * const config: AccountConfig = { options: { requestsPerMinute: 60 }, process: new SharedProcess('p-1', 124_000) };
 * ```
 */
export class SharedProcess implements AccountProcess {
  constructor(
    readonly id: string,
    readonly leaseMs: number,
  ) {}

  readyAt(record: AccountRecord, klass: Exclude<FairClass, 'abort'>, now: number, config: AccountConfig, limits: BudgetLimits): number {
    const own = ownLimits(record, config);
    const entry = record.processes[this.id];
    return Math.max(
      own.perMinute < limits.perMinute && entry !== undefined ? pacerReadyAt(entry.ownTat, own) : -Infinity,
      klass === 'reads' ? shareReadyAt(record, this, config, limits, now) : -Infinity,
      // Starts and aborts come before reads and interactive calls account-wide.
      klass === 'start' ? -Infinity : claimedUntil(record, this.id, now),
    );
  }

  readsShare(record: AccountRecord, now: number, config: AccountConfig, limits: BudgetLimits): number {
    const share = readShare(record, this, config, limits, now);
    return share.sharing ? Math.min(1, limits.pacingIntervalMs / share.intervalMs) : 1;
  }

  afterSend(record: AccountRecord, klass: FairClass, now: number, config: AccountConfig, limits: BudgetLimits): AccountRecord {
    const entry = record.processes[this.id];
    if (entry === undefined) return record;
    const own = ownLimits(record, config);
    const share = klass === 'reads' ? readShare(record, this, config, limits, now) : undefined;
    // A process that came late for its turns (a busy machine, a timer fired late) keeps the turns it may
    // miss before its share is lent: it catches up on them, at the pacer's pace, once its reads come.
    const readTat = share === undefined ? entry.readTat : (entry.readTat === NEVER ? now : Math.max(entry.readTat, now - LEND_AFTER_TURNS * share.intervalMs)) + share.intervalMs;
    const ownTat = own.perMinute < limits.perMinute && klass !== 'abort' ? pacerAfterSend(entry.ownTat, now, own) : entry.ownTat;
    return { ...record, processes: { ...record.processes, [this.id]: { ...entry, readTat, ownTat } } };
  }
}

/** This process's own limits: its configured numbers, lowered by the service's. */
function ownLimits(record: AccountRecord, config: AccountConfig): BudgetLimits {
  return limitsFor(config, configuredPerMinute(config), record.serverLimits);
}

/**
 * When several live processes have runs waiting to read, each process's reads get the share of the
 * pace its waiting runs make of the account's, so every run is read about as often whichever process
 * holds it. The shares add up to the pacer's whole pace: a process that stops taking its turns (killed
 * with -9, stalled, its runs no longer due) lends its share to the others once it has missed
 * `LEND_AFTER_TURNS` of them, and takes it back with its next read. Returns the interval between this
 * process's reads (kept up while it reads alone too, so that its turns are known when another process
 * comes).
 */
function readShare(record: AccountRecord, process: AccountProcess, config: AccountConfig, limits: BudgetLimits, now: number): { readonly intervalMs: number; readonly sharing: boolean } {
  const { id, leaseMs } = process;
  const reading = Object.entries(record.processes).filter(([name, entry]) => entry.demand > 0 || name === id);
  const nominal = shareIntervals(reading, id, config, record, limits);
  // A process is taking its turns while its next one was due, or it last asked the account (its lease
  // renewed: a process that has not read yet, or waits for a slot), less than a few of them ago.
  const lendAfter = (name: string): number => Math.max(LEND_AFTER_TURNS * (nominal.get(name) ?? 0), limits.burst * limits.pacingIntervalMs);
  const active = reading.filter(([name, entry]) => name === id || now - Math.max(entry.readTat, entry.until - leaseMs) <= lendAfter(name));
  const intervals = active.length === reading.length ? nominal : shareIntervals(active, id, config, record, limits);
  return { intervalMs: intervals.get(id) ?? limits.pacingIntervalMs, sharing: active.length > 1 };
}

/**
 * The interval between reads of each of `entries` when they share the pacer's pace by their runs
 * waiting: processes held to a lower limit of their own take what it allows, the others share the rest
 * by their demand (water-filling).
 */
function shareIntervals(entries: readonly (readonly [string, ProcessEntry])[], id: string, config: AccountConfig, record: AccountRecord, limits: BudgetLimits): ReadonlyMap<string, number> {
  const open = new Map(entries.map(([name, entry]) => [name, { weight: Math.max(1, entry.demand), cap: entry.perMinute < limits.perMinute ? 1 / limitsFor(config, entry.perMinute, record.serverLimits).pacingIntervalMs : Infinity }]));
  const intervals = new Map<string, number>();
  let paceLeft = 1 / limits.pacingIntervalMs;
  for (let settled = false; !settled; ) {
    settled = true;
    let weight = 0;
    for (const entry of open.values()) weight += entry.weight;
    for (const [name, entry] of open) {
      if ((paceLeft * entry.weight) / weight > entry.cap) {
        intervals.set(name, 1 / entry.cap);
        paceLeft -= entry.cap;
        open.delete(name);
        settled = false;
        break;
      }
    }
  }
  let weight = 0;
  for (const entry of open.values()) weight += entry.weight;
  for (const [name, entry] of open) intervals.set(name, weight / (Math.max(paceLeft, 1e-12) * entry.weight));
  if (!intervals.has(id)) intervals.set(id, weight / Math.max(paceLeft, 1e-12));
  return intervals;
}

/**
 * Until when another process than `id` has a start or abort waiting for the account's pace (its
 * `claimUntil`), or `-Infinity` when none has: this process's reads and interactive calls wait until
 * then, so that no process's lower class takes the slot another's higher class waits for.
 */
function claimedUntil(record: AccountRecord, id: string, now: number): number {
  let until = -Infinity;
  for (const name in record.processes) {
    const claim = record.processes[name]?.claimUntil;
    if (name !== id && claim !== undefined && claim > now) until = Math.max(until, claim);
  }
  return until;
}

/**
 * This process's entry with its claim on the slot at `slotAt` (and a lease after it), or without one
 * (`undefined`).
 */
function claimed(record: AccountRecord, slotAt: number | undefined, config: AccountConfig): AccountRecord {
  const id = config.process?.id;
  const entry = id === undefined ? undefined : record.processes[id];
  if (id === undefined || entry === undefined) return record;
  const claimUntil = slotAt === undefined ? undefined : slotAt + claimLeaseMs(accountLimits(record, config));
  if (claimUntil === entry.claimUntil) return record;
  const rest: ProcessEntry = { until: entry.until, perMinute: entry.perMinute, burst: entry.burst, demand: entry.demand, readTat: entry.readTat, ownTat: entry.ownTat };
  return { ...record, processes: { ...record.processes, [id]: claimUntil === undefined ? rest : { ...rest, claimUntil } } };
}

/** When this process's share lets its next read go: only while other processes have runs waiting to read too. */
function shareReadyAt(record: AccountRecord, process: AccountProcess, config: AccountConfig, limits: BudgetLimits, now: number): number {
  const entry = record.processes[process.id];
  if (entry === undefined || !readShare(record, process, config, limits, now).sharing) return -Infinity;
  // No burst of its own: it would let a few-run process bank turns while the many-run ones wait.
  return entry.readTat;
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
 * wait until a time, or granted, the send counted. `demand`: for reads, this process's runs waiting
 * to read; for a start or abort, this process's starts and aborts waiting, this one included.
 *
 * A start or abort claims the account's slot it waits for (`ProcessEntry.claimUntil`): told to wait
 * for the account's pace — not for an identical start's spacing, nor for its process's own lower
 * limit — or granted with more of them waiting behind it (the next slot then). The other processes'
 * reads and interactive calls yield to the claim; anything else this process asks ends it.
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
  const paceAt = readyAt(next, request.klass, now, config);
  const at = Math.max(paceAt, request.startKey === undefined ? -Infinity : startReadyAt(next, request.startKey, config));
  const claims = (request.klass === 'start' || request.klass === 'abort') && ownLimits(next, config).perMinute >= accountLimits(next, config).perMinute;
  if (at > now) {
    return { record: claimed(next, claims && paceAt > now && paceAt >= at ? paceAt : undefined, config), verdict: { verdict: 'wait', at } };
  }
  const sent = afterSend(next, request.klass, request.startKey, now, config);
  return { record: claimed(sent, claims && request.demand > 1 ? Math.max(now, readyAt(sent, request.klass, now, config)) : undefined, config), verdict: { verdict: 'granted' } };
}
