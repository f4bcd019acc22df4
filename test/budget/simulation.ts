import type { BudgetState } from '../../src/domain/budget.js';
import type { GateTicket, RateLimitInfo } from '../../src/domain/requests.js';
import type { RequestPriority } from '../../src/domain/endpoints.js';
import type { RequestBudgetOptions } from '../../src/budget/account-rules.js';
import { budgetState } from '../../src/budget/account-budget.js';
import type { LedgerAccount } from '../../src/budget/ledger.js';
import { BudgetCore } from '../../src/budget/budget-core.js';
import type { BudgetEvent } from '../../src/budget/budget-core.js';

export interface Sent {
  readonly id: number;
  readonly at: number;
  readonly ticket: GateTicket;
}

export interface Refused {
  readonly id: number;
  readonly at: number;
  readonly resetAt: number;
}

/**
 * Drives the budget's core in virtual time, as the shell does with real timers: each step's `wakeAt` is
 * honoured before time moves past it.
 */
export class Simulation {
  readonly core: BudgetCore;
  now = 0;
  wakeAt: number | undefined;
  readonly sent: Sent[] = [];
  readonly refused: Refused[] = [];
  /** Steps taken: events and wake-ups. */
  steps = 0;
  readonly #tickets = new Map<number, GateTicket>();
  #nextId = 0;

  constructor(options: RequestBudgetOptions = {}) {
    this.core = new BudgetCore(options);
  }

  get account(): LedgerAccount {
    return this.core.account;
  }

  /** The public state now. */
  snapshot(at = this.now): BudgetState {
    return budgetState(this.core, at);
  }

  /** Lets virtual time pass, firing the core's wake-ups on the way. */
  advanceTo(time: number): void {
    while (this.wakeAt !== undefined && this.wakeAt <= time) {
      this.now = Math.max(this.now, this.wakeAt);
      this.#dispatch({ type: 'wake' });
    }
    this.now = Math.max(this.now, time);
  }

  advanceBy(ms: number): void {
    this.advanceTo(this.now + ms);
  }

  /** A step at `now` with nothing new, as when a timer the shell set fires. */
  wake(): void {
    this.#dispatch({ type: 'wake' });
  }

  enqueue(ticket: GateTicket): number {
    const id = this.#nextId++;
    this.#tickets.set(id, ticket);
    this.#dispatch({ type: 'enqueue', id, ticket });
    return id;
  }

  cancel(id: number): void {
    this.#dispatch({ type: 'cancel', id });
  }

  report(ticket: GateTicket, httpStatus: number | undefined = 200, rateLimit: RateLimitInfo = {}): void {
    this.#dispatch({ type: 'report', report: { ticket, httpStatus, rateLimit } });
  }

  sentAt(id: number): number | undefined {
    return this.sent.find((sent) => sent.id === id)?.at;
  }

  #dispatch(event: BudgetEvent): void {
    this.steps += 1;
    const result = this.core.step(event, this.now);
    this.wakeAt = result.wakeAt;
    for (const id of result.released) this.sent.push({ id, at: this.now, ticket: this.#tickets.get(id)! });
    for (const { id, resetAt } of result.refused) this.refused.push({ id, at: this.now, resetAt });
  }
}

export function ticket(priority: RequestPriority, key?: string): GateTicket {
  const endpoint = priority === 'start' ? 'run' : priority === 'interactive' ? 'search' : priority;
  return key === undefined ? { endpoint, priority } : { endpoint, priority, key };
}

/** The most sends in any window of `windowMs` (half-open, as the service counts), wherever it starts. */
export function maxInAnyWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[first]! + windowMs <= sorted[last]!) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * The most sends in a window of `windowMs` ending at (and including) a send that `counts`, over every
 * such send: what that send saw when it went. Sends must be in the order they went.
 */
export function mostUpToEach(sent: readonly Sent[], counts: (sent: Sent) => boolean, windowMs: number): number {
  let most = 0;
  let first = 0;
  for (let last = 0; last < sent.length; last++) {
    while (sent[first]!.at + windowMs <= sent[last]!.at) first++;
    if (counts(sent[last]!)) most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * How many of these arrivals the service would refuse (service.md §2.1): a fixed window opens at the
 * first request, counts every request (refused ones too) and closes 60 s later; the next request opens
 * the next window.
 */
export function serviceRejections(times: readonly number[], limit: number, windowMs = 60_000): number {
  let windowStart = Number.NEGATIVE_INFINITY;
  let count = 0;
  let rejected = 0;
  for (const at of [...times].sort((a, b) => a - b)) {
    if (at >= windowStart + windowMs) {
      windowStart = at;
      count = 0;
    }
    count++;
    if (count > limit) rejected++;
  }
  return rejected;
}

/** Things to do at given virtual times, interleaved with the core's own wake-ups. */
export class Agenda {
  readonly #items: { readonly at: number; readonly order: number; readonly run: () => void }[] = [];
  #order = 0;
  #handled = 0;

  constructor(
    readonly sim: Simulation,
    /** Called once for each request the core lets through, in order. */
    readonly onSent: (sent: Sent) => void = () => undefined,
  ) {}

  at(time: number, run: () => void): void {
    this.#items.push({ at: time, order: this.#order++, run });
  }

  /** Runs everything due up to `until`, in time order. */
  runUntil(until: number): void {
    for (;;) {
      this.#notifySends();
      this.#items.sort((a, b) => a.at - b.at || a.order - b.order);
      const next = this.#items[0];
      const wakeAt = this.sim.wakeAt;
      if (next !== undefined && next.at <= until && (wakeAt === undefined || next.at <= wakeAt)) {
        this.#items.shift();
        this.sim.advanceTo(next.at);
        this.#notifySends();
        next.run();
      } else if (wakeAt !== undefined && wakeAt <= until) {
        this.sim.advanceTo(wakeAt);
      } else {
        this.sim.advanceTo(until);
        this.#notifySends();
        return;
      }
    }
  }

  #notifySends(): void {
    while (this.#handled < this.sim.sent.length) this.onSent(this.sim.sent[this.#handled++]!);
  }
}

/** The service's account counter (service.md §2.1): fixed windows opened by the first request, refusals counted. */
export class AccountCounter {
  #windowStart = Number.NEGATIVE_INFINITY;
  #count = 0;
  rejected = 0;

  constructor(
    readonly limit = 100,
    readonly windowMs = 60_000,
  ) {}

  arrive(at: number): { readonly httpStatus: number; readonly remainingPerMinute: number } {
    if (at >= this.#windowStart + this.windowMs) {
      this.#windowStart = at;
      this.#count = 0;
    }
    this.#count++;
    const accepted = this.#count <= this.limit;
    if (!accepted) this.rejected++;
    return { httpStatus: accepted ? 200 : 429, remainingPerMinute: Math.max(0, this.limit - this.#count) };
  }
}
