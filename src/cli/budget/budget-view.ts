import { accountState } from '../../budget/account-budget.js';
import { type AccountConfig, type AccountRecord, pruned } from '../../budget/account-rules.js';
import type { BudgetState } from '../../index.js';
import type { RunsByState } from './runs-by-state.js';

/** A window's count: its limit, what was used of it and what is left. */
export interface Meter {
  readonly limit: number;
  readonly used: number;
  readonly remaining: number;
}

/** One process of a fleet, as the account's record in Redis holds it. */
export interface ProcessView {
  /** The process's id in the record (a random UUID it took when its budget was made). */
  readonly id: string;
  /** Its configured limit per minute. */
  readonly perMinute: number;
  /** Its runs with a status or output read waiting for the account. */
  readonly runsPolling: number;
  /** When its lease ends unless it asks again (a process killed with -9 is forgotten then). */
  readonly leaseEndsAt: string;
}

/**
 * One refresh of `flowstream budget`, as it prints it (one JSON line per refresh when piped). Times are
 * ISO 8601. A figure the source cannot know is `null`: the service does not tell what waits in a
 * process, its runs or the processes of the account.
 */
export interface BudgetView {
  readonly at: string;
  /** `service`: read off the service's rate-limit headers; `redis`: the account's record a fleet shares. */
  readonly source: 'service' | 'redis';
  /** The account's name in Redis (`redis` only). */
  readonly account?: string;
  /**
   * False when the source has no count of the account: Redis holds no record of it (no process used it
   * in the last two days), or the service's answer carried no rate-limit headers (then the minute and
   * the day are this command's own count).
   */
  readonly recorded: boolean;
  readonly minute: Meter;
  /** `reserve`: kept for aborts and starts, never spent on polls. */
  readonly day: Meter & { readonly reserve: number };
  /** The service's last word on the account (its `X-RateLimit-Remaining-*` headers), when it said one. */
  readonly server: { readonly remainingPerMinute?: number; readonly remainingPerDay?: number; readonly at?: string };
  /** Set while a 429 holds every request of the account back. */
  readonly pausedUntil?: string;
  /** Requests waiting for the budget, by class. */
  readonly waiting: { readonly abort: number | null; readonly start: number | null; readonly interactive: number | null; readonly reads: number | null };
  /**
   * Runs of the fleet: `polling`, those with a read waiting; `byState`, the executions its Redis run
   * hubs follow by status (`null` when they follow none, or the fleet uses no Redis run hub).
   */
  readonly runs: { readonly polling: number; readonly byState: RunsByState | null } | null;
  readonly processes: readonly ProcessView[] | null;
}

/** A rule-book config of no process: the record is read, never joined. */
const READER: AccountConfig = { options: {} };

const NO_QUEUE: BudgetState['queued'] = { total: 0, byPriority: { abort: 0, start: 0, interactive: 0, status: 0, output: 0 } };

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function serverOf(state: BudgetState): BudgetView['server'] {
  const { remainingPerMinute, remainingPerDay, at } = state.server;
  return {
    ...(remainingPerMinute === undefined ? {} : { remainingPerMinute }),
    ...(remainingPerDay === undefined ? {} : { remainingPerDay }),
    ...(at === undefined ? {} : { at: iso(at) }),
  };
}

/**
 * The view of a fleet's account from its record in Redis at `now` (the account's clock): the
 * processes whose lease runs, what the rule book counts of the minute and the day, and the reads
 * each process has waiting, with the runs its Redis run hubs follow by state. What waits in a
 * process's own queue besides reads is not in Redis.
 *
 * @example
 * ```ts
 * const view = viewOfRecord(record, now, 'acme-prod', runsByState(states, true));
 * ```
 */
export function viewOfRecord(stored: AccountRecord | undefined, now: number, account: string, byState: RunsByState | null): BudgetView {
  const record = stored === undefined ? undefined : pruned(stored, now, READER).record;
  const processes = Object.entries(record?.processes ?? {})
    .map(([id, entry]) => ({ id, perMinute: entry.perMinute, runsPolling: entry.demand, leaseEndsAt: iso(entry.until) }))
    .sort((a, b) => a.id.localeCompare(b.id));
  const polling = processes.reduce((sum, entry) => sum + entry.runsPolling, 0);
  const state = record === undefined ? undefined : accountState(record, READER, now, { inFlight: 0, queued: NO_QUEUE, cadences: {} });
  return {
    at: iso(now),
    source: 'redis',
    account,
    recorded: record !== undefined,
    ...meters(state),
    server: state === undefined ? {} : serverOf(state),
    ...(state?.pausedUntil === undefined ? {} : { pausedUntil: iso(state.pausedUntil) }),
    waiting: { abort: null, start: null, interactive: null, reads: polling },
    runs: { polling, byState },
    processes,
  };
}

/** Minute and day by the budget's own count (a fresh account when nothing is recorded). */
function meters(state: BudgetState | undefined): Pick<BudgetView, 'minute' | 'day'> {
  if (state === undefined) {
    return { minute: { limit: 100, used: 0, remaining: 100 }, day: { limit: 10_000, used: 0, remaining: 10_000, reserve: 0 } };
  }
  return {
    minute: { limit: state.limitPerMinute, used: state.usedThisMinute, remaining: state.remainingThisMinute },
    day: { limit: state.limitPerDay, used: state.day.used, remaining: state.day.remaining, reserve: state.day.reserve },
  };
}

/**
 * The view of the account as the service reports it, from a client's budget after a request: the
 * minute and the day by the service's count (service.md §2.1: the headers count every process and
 * key of the account), or by this process's own when the answer carried no headers. A single client
 * knows nothing of a fleet's processes and runs.
 *
 * @example
 * ```ts
 * await client.workflows.search({ pageSize: 1 });
 * const view = viewOfService(client.budget!.snapshot());
 * ```
 */
export function viewOfService(state: BudgetState): BudgetView {
  const { remainingPerMinute, remainingPerDay } = state.server;
  const minuteLeft = remainingPerMinute ?? state.remainingThisMinute;
  const dayLeft = remainingPerDay ?? state.remainingToday;
  return {
    at: iso(state.at),
    source: 'service',
    recorded: remainingPerMinute !== undefined || remainingPerDay !== undefined,
    minute: { limit: state.limitPerMinute, used: Math.max(0, state.limitPerMinute - minuteLeft), remaining: minuteLeft },
    day: { limit: state.limitPerDay, used: Math.max(0, state.limitPerDay - dayLeft), remaining: dayLeft, reserve: state.day.reserve },
    server: serverOf(state),
    ...(state.pausedUntil === undefined ? {} : { pausedUntil: iso(state.pausedUntil) }),
    waiting: { abort: null, start: null, interactive: null, reads: null },
    runs: null,
    processes: null,
  };
}
