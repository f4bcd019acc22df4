import type { GateReport, GateTicket } from '../domain/requests.js';
import {
  accountLimits,
  afterReport,
  afterSend,
  identicalStartKey,
  newAccountRecord,
  nextMarkExpiryAt,
  pruned,
  readsPerMinute,
  readyAt,
  startReadyAt,
  startRefusedUntil,
} from './account-rules.js';
import type { AccountAnswer, AccountConfig, AccountRecord, BudgetLimits } from './account-rules.js';
import type { FairClass } from './fair-queue.js';
import { fairClassOf } from './fair-queue.js';

/**
 * A change of the account: the record as the ledger holds it and the time of the change (never
 * earlier than the record's own clock), to the record after it and what the change answers.
 */
export type AccountChange<T> = (record: AccountRecord, now: number) => readonly [AccountRecord, T];

/**
 * Where the account's record lives and how it is changed atomically: the one thing that differs
 * between a budget in memory and one shared through Redis. Every rule is the rule book's
 * (account-rules.ts); a ledger only keeps the record and applies changes one at a time. The account's
 * clock never steps back: a change asked at an earlier time than the record's is applied at the record's.
 *
 * @example
 * ```ts
 * const ledger = createMemoryLedger();
 * ledger.transact(now, (record, at) => [afterSend(record, 'reads', undefined, at, config), undefined]);
 * ```
 */
export interface AccountLedger {
  transact<T>(now: number, change: AccountChange<T>): T | Promise<T>;
}

/**
 * A ledger in memory, synchronous: a change is applied in the same step (a budget's virtual-time
 * tests rely on grants resolving at once).
 *
 * @example
 * ```ts
 * const budget = createAccountBudget({ ledger: createMemoryLedger() });
 * ```
 */
export interface MemoryLedger extends AccountLedger {
  /** The record now. */
  readonly record: AccountRecord;
  transact<T>(now: number, change: AccountChange<T>): T;
  /** Takes `record` as the account's: a mirror of a record another store keeps. */
  replace(record: AccountRecord): void;
}

/**
 * Creates a ledger in memory, holding a fresh record.
 *
 * @example
 * ```ts
 * const ledger = createMemoryLedger();
 * ledger.record.recent; // []
 * ```
 */
export function createMemoryLedger(): MemoryLedger {
  let record = newAccountRecord('memory');
  return {
    get record() {
      return record;
    },
    transact<T>(now: number, change: AccountChange<T>): T {
      const at = Math.max(now, record.at);
      const [next, result] = change(record, at);
      record = next.at >= at ? next : { ...next, at };
      return result;
    },
    replace(next: AccountRecord): void {
      record = next;
    },
  };
}

const NOTHING_FREED: readonly string[] = Object.freeze([]);

/**
 * The account as the budget's core asks it, in one process: the rule book over a synchronous
 * ledger's record, and this process's requests in flight (the anchor of every "until the window can
 * have reset", service.md §2.1).
 */
export class LedgerAccount {
  readonly inFlight = new InFlight();
  /** What the last report said, as the rule book takes it: a shared account is told the same. */
  lastAnswer: AccountAnswer | undefined;
  /** The record the last prune left, and its instant. */
  #prunedRecord: AccountRecord | undefined;
  #prunedAt = Number.NaN;
  /** When each class may go, for one record and instant. */
  #readyRecord: AccountRecord | undefined;
  #readyNow = Number.NaN;
  #readyAt: Partial<Record<FairClass, number>> = {};

  readonly #ledger: MemoryLedger;

  constructor(
    ledger: MemoryLedger,
    readonly config: AccountConfig,
  ) {
    this.#ledger = ledger;
  }

  get record(): AccountRecord {
    return this.#ledger.record;
  }

  get limits(): BudgetLimits {
    return accountLimits(this.#ledger.record, this.config);
  }

  /** Lets go of what `now` has made obsolete; returns the identical-start keys now free. */
  prune(now: number): readonly string[] {
    // Records are values: the record this prune left, pruned again at the same instant, frees nothing.
    // A burst (a deploy cancelling every run) steps the budget many times at one instant.
    if (this.#ledger.record === this.#prunedRecord && now === this.#prunedAt) return NOTHING_FREED;
    const freed = this.#ledger.transact(now, (record, at) => {
      const next = pruned(record, at, this.config);
      return [next.record, next.freed];
    });
    this.#prunedRecord = this.#ledger.record;
    this.#prunedAt = now;
    return freed;
  }

  /** When a request of `klass` may go: computed once per record, class and instant. */
  readyAt(klass: FairClass, now: number): number {
    const record = this.#ledger.record;
    if (record !== this.#readyRecord || now !== this.#readyNow) {
      this.#readyRecord = record;
      this.#readyNow = now;
      this.#readyAt = {};
    }
    return (this.#readyAt[klass] ??= readyAt(record, klass, now, this.config));
  }

  startRefusedUntil(now: number): number | undefined {
    return startRefusedUntil(this.#ledger.record, now, this.config);
  }

  /** When an identical start of `key` may go. */
  startReadyAt(key: string): number {
    return startReadyAt(this.#ledger.record, key, this.config);
  }

  nextMarkExpiryAt(): number | undefined {
    return nextMarkExpiryAt(this.#ledger.record, this.config);
  }

  readsPerMinute(now: number): number {
    return readsPerMinute(this.#ledger.record, now, this.config);
  }

  /** `ticket` was let through at `now`. */
  sent(ticket: GateTicket, now: number): void {
    this.inFlight.add(ticket, now);
    this.#ledger.transact(now, (record, at) => [afterSend(record, fairClassOf(ticket.priority), identicalStartKey(ticket), at, this.config), undefined]);
  }

  /** An attempt's answer (or failure) arrived at `now`; returns whether it matched a request in flight. */
  report(report: GateReport, now: number): boolean {
    const sentAt = this.inFlight.settle(report.ticket);
    const answer = { sentAt, inFlight: this.inFlight.size, httpStatus: report.httpStatus, rateLimit: report.rateLimit, startKey: identicalStartKey(report.ticket) };
    this.lastAnswer = answer;
    this.#ledger.transact(now, (record, at) => [afterReport(record, answer, at, this.config), undefined]);
    return sentAt !== undefined;
  }
}

/**
 * A request let through whose report has not come yet, and when it left: the service's window that
 * counts it began at most 60 s before it arrived, and it arrived within the latency allowance of
 * `sentAt` — the anchor for every "until the window can have reset" (service.md §2.1).
 *
 * @example
 * ```ts
 * const request: InFlightRequest = { ticket: { endpoint: 'status', priority: 'status', key: 'we-1' }, sentAt: 1_000 };
 * ```
 */
export interface InFlightRequest {
  readonly ticket: GateTicket;
  readonly sentAt: number;
}

/**
 * The requests in flight, grouped by what they ask (endpoint, priority, key), so that settling a
 * report looks only at its own kind: O(1) for the usual single request per run and endpoint.
 */
export class InFlight {
  readonly #byKind = new Map<string, InFlightRequest[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(ticket: GateTicket, sentAt: number): void {
    const name = kindOf(ticket);
    const requests = this.#byKind.get(name);
    if (requests === undefined) this.#byKind.set(name, [{ ticket, sentAt }]);
    else requests.push({ ticket, sentAt });
    this.#size += 1;
  }

  /**
   * Takes out the request `ticket` reports on and says when it was sent. Matched by identity first
   * (the http layer reports the ticket it acquired with), then by endpoint, priority and key, oldest
   * first; `undefined` for a report nothing matches.
   */
  settle(ticket: GateTicket): number | undefined {
    const name = kindOf(ticket);
    const requests = this.#byKind.get(name);
    if (requests === undefined) return undefined;
    const same = requests.findIndex((request) => request.ticket === ticket);
    const [settled] = requests.splice(same < 0 ? 0 : same, 1);
    if (requests.length === 0) this.#byKind.delete(name);
    this.#size -= 1;
    return settled?.sentAt;
  }
}

function kindOf(ticket: GateTicket): string {
  return `${ticket.endpoint}\u0000${ticket.priority}\u0000${ticket.key === undefined ? '-' : `=${ticket.key}`}`;
}
