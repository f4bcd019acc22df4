import type { PollHeadroom } from '../domain/budget.js';
import type { RequestBudgetOptions } from '../domain/options.js';
import type { GateReport, GateTicket } from '../domain/requests.js';
import { identicalStartKey } from './account-rules.js';
import type { AccountConfig } from './account-rules.js';
import type { QueuedRequest } from './class-queue.js';
import { chooseNext, FAIR_CLASSES, fairClassOf, FairQueue } from './fair-queue.js';
import type { ClassHead, FairClass } from './fair-queue.js';
import { KeyCadences } from './key-cadence.js';
import { createMemoryLedger, LedgerAccount } from './ledger.js';
import type { MemoryLedger } from './ledger.js';
import { StartLines } from './start-lines.js';

/**
 * What can happen to the budget. `id`s are the shell's handles on waiting requests.
 *
 * @example
 * ```ts
 * const event: SchedulerEvent = { type: 'enqueue', id: 1, ticket: { endpoint: 'status', priority: 'status', key: 'we-1' } };
 * ```
 */
export type SchedulerEvent =
  | { readonly type: 'enqueue'; readonly id: number; readonly ticket: GateTicket }
  | { readonly type: 'cancel'; readonly id: number }
  | { readonly type: 'report'; readonly report: GateReport }
  /** The timer the previous step asked for has fired. */
  | { readonly type: 'wake' };

/**
 * A start the day can no longer take, refused rather than kept waiting for hours.
 *
 * @example
 * ```ts
 * const refusal: Refusal = { id: 4, resetAt: 86_402_000 };
 * ```
 */
export interface Refusal {
  readonly id: number;
  /** When the day can take a start again, at the latest. */
  readonly resetAt: number;
}

/**
 * The outcome of one step: the requests to let through now (in order), the starts refused, and when
 * to step again if nothing else happens (`undefined`: only an event can change anything, so no timer).
 *
 * @example
 * ```ts
 * const { released, refused, wakeAt } = core.step({ type: 'wake' }, now);
 * ```
 */
export interface SchedulerStep {
  readonly released: readonly number[];
  readonly refused: readonly Refusal[];
  readonly wakeAt: number | undefined;
}

/**
 * The budget's state machine: the waiting requests (a fair queue per class, identical starts in line)
 * and the account they draw on. `step` applies one event at time `now`, then lets through every
 * waiting request that may go, highest class first (see `chooseNext`). Mutable so that every step
 * costs O(log n) in the number waiting — each request is enqueued, chosen or dropped once, through
 * heaps and maps — where a copy of the state per step cost O(n) and a scan per send O(n²) in all. The
 * decisions themselves (pacing, caps, the day, the choice between classes) are pure functions.
 */
export class BudgetCore {
  readonly account: LedgerAccount;
  readonly queue = new FairQueue();
  readonly cadences: KeyCadences;
  readonly #lines = new StartLines();
  /** Consecutive sends that overtook a waiting lower-class request (see `chooseNext`). */
  #bypassed = 0;

  constructor(options: RequestBudgetOptions = {}, ledger?: MemoryLedger, process?: AccountConfig['process']) {
    this.account = new LedgerAccount(ledger ?? createMemoryLedger(), { options, ...(process === undefined ? {} : { process }) });
    this.cadences = new KeyCadences(this.account.limits.minuteWindowMs);
  }

  /** The runs polling now and the pace the account gives their reads (see `PollHeadroom`). */
  headroom(now: number): PollHeadroom {
    return { activeRuns: this.cadences.size, readsPerMinute: this.account.readsPerMinute(now) };
  }

  /**
   * Applies `event` at `now` and lets through what may go.
   *
   * @example
   * ```ts
   * const core = new BudgetCore();
   * core.step({ type: 'enqueue', id: 1, ticket }, 0).released; // [1]: under the limit a request goes at once
   * ```
   */
  step(event: SchedulerEvent, now: number): SchedulerStep {
    const refused: Refusal[] = [];
    this.#prune(now);
    this.#apply(event, now, refused);
    // An answer may free an identical start's key at once (a spacing of 0).
    this.#offerFreed(this.account.prune(now));
    return this.#drain(now, refused);
  }

  #apply(event: SchedulerEvent, now: number, refused: Refusal[]): void {
    switch (event.type) {
      case 'enqueue': {
        // A start the day cannot take fails at once instead of waiting hours for the window.
        const refusedUntil = fairClassOf(event.ticket.priority) === 'start' ? this.account.startRefusedUntil(now) : undefined;
        if (refusedUntil !== undefined) {
          refused.push({ id: event.id, resetAt: refusedUntil });
          return;
        }
        const entry = this.queue.enqueue(event.id, event.ticket, now);
        this.cadences.busy(event.ticket, 1, now);
        const key = identicalStartKey(event.ticket);
        if (key === undefined || (this.#lines.join(key, entry) && this.#free(key, now))) this.queue.offer(entry);
        return;
      }
      case 'cancel': {
        // Cancellation as data: the entry leaves the queue and frees nothing else.
        const entry = this.queue.get(event.id);
        if (entry !== undefined) this.#leave(entry, now);
        return;
      }
      case 'report':
        if (this.account.report(event.report, now)) this.cadences.busy(event.report.ticket, -1, now);
        return;
      case 'wake':
        return;
      default:
        unreachable(event);
    }
  }

  #drain(now: number, refused: Refusal[]): SchedulerStep {
    const released: number[] = [];
    for (;;) {
      this.#refuseStarts(now, refused);
      const heads: ClassHead[] = [];
      let wakeAt = Number.POSITIVE_INFINITY;
      for (const klass of FAIR_CLASSES) {
        const head = this.#head(klass, now);
        if (head === undefined) continue;
        const readyAt = this.account.readyAt(klass, now);
        if (readyAt <= now) heads.push(head);
        else wakeAt = Math.min(wakeAt, readyAt);
      }
      const [first, ...rest] = heads;
      if (first === undefined) {
        // Identical starts waiting in line go when their key's spacing has passed.
        const expiry = this.queue.size > 0 ? (this.account.nextMarkExpiryAt() ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
        wakeAt = Math.min(wakeAt, expiry);
        return { released, refused, wakeAt: Number.isFinite(wakeAt) ? wakeAt : undefined };
      }
      const { chosen, bypassed } = chooseNext([first, ...rest], this.#bypassed, this.account.limits.starvationLimit);
      this.#bypassed = bypassed;
      this.#send(chosen, now);
      released.push(chosen.id);
    }
  }

  /** While the day cannot take a start, every start that could be chosen is refused. */
  #refuseStarts(now: number, refused: Refusal[]): void {
    const starts = this.queue.of('start');
    if (starts.size === 0) return;
    const resetAt = this.account.startRefusedUntil(now);
    if (resetAt === undefined) return;
    for (let entry = starts.next(); entry !== undefined; entry = starts.next()) {
      this.#leave(entry, now);
      refused.push({ id: entry.id, resetAt });
    }
  }

  /**
   * The class's two heads, once neither is an identical start whose key is held: such a start leaves
   * the heaps (it stays first in its line) until its key is free. That only happens when a start's
   * answer came without this budget having sent it; otherwise only free keys are offered.
   */
  #head(klass: FairClass, now: number): ClassHead | undefined {
    const queue = this.queue.of(klass);
    for (;;) {
      const next = queue.next();
      const oldest = queue.oldest();
      if (next === undefined || oldest === undefined) return undefined;
      const held = this.#free(identicalStartKey(next.ticket), now) ? (this.#free(identicalStartKey(oldest.ticket), now) ? undefined : oldest) : next;
      if (held === undefined) return { klass, next, oldest };
      queue.remove(held);
    }
  }

  #send(entry: QueuedRequest, now: number): void {
    const { ticket } = entry;
    this.account.sent(ticket, now);
    this.queue.served(entry);
    this.#dequeue(entry, now);
    this.cadences.polled(ticket, entry.enqueuedAt, now);
  }

  /** A waiting request leaves without being sent: nothing of it is on its way. */
  #leave(entry: QueuedRequest, now: number): void {
    this.#dequeue(entry, now);
    this.cadences.busy(entry.ticket, -1, now);
  }

  /** Takes `entry` out of the queue; when it was first in its identical starts' line, offers the next if its key is free. */
  #dequeue(entry: QueuedRequest, now: number): void {
    this.queue.remove(entry.id);
    const key = identicalStartKey(entry.ticket);
    if (key === undefined) return;
    const next = this.#lines.leave(key, entry);
    if (next !== undefined && this.#free(key, now)) this.queue.offer(next);
  }

  #prune(now: number): void {
    this.#offerFreed(this.account.prune(now));
    this.cadences.prune(now);
  }

  /** The first identical start in line of each key now free becomes choosable. */
  #offerFreed(keys: readonly string[]): void {
    for (const key of keys) {
      const first = this.#lines.first(key);
      if (first !== undefined && first.turnSlot < 0) this.queue.offer(first);
    }
  }

  /** Whether an identical start of `key` may go now (any other request: always). */
  #free(key: string | undefined, now: number): boolean {
    return key === undefined || this.account.startReadyAt(key) <= now;
  }
}

function unreachable(value: never): never {
  throw new Error(`Unexpected scheduler event: ${JSON.stringify(value)}`);
}
