import { asyncScheduler, Observable } from 'rxjs';
import type { SchedulerLike, Subscriber, Subscription } from 'rxjs';
import type { AccountBudget, BudgetState, DayView } from '../domain/budget.js';
import { type AccountBudgetOptions, DEFAULTS, type RequestBudgetOptions } from '../domain/options.js';
import type { GateReport, GateTicket, GateTurn } from '../domain/requests.js';
import { RateLimitError } from '../errors/api-errors.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { knownKeys, MAX_TIMER_MS, objectArgument, schedulerArgument } from '../errors/validation-errors.js';
import { accountLimits, DAY_MS, dayBucketAt, dayBucketEmptyAt, FULL_DAY_BUCKET, MINUTE_MS, pacedRemaining, readyAt, sentWithin } from './account-rules.js';
import type { AccountConfig, AccountRecord } from './account-rules.js';
import { fairClassOf } from './fair-queue.js';
import { createMemoryLedger } from './ledger.js';
import type { MemoryLedger } from './ledger.js';
import { BudgetCore } from './budget-core.js';
import type { KeyCadence, Refusal, BudgetEvent } from './budget-core.js';

export type { AccountBudget, AccountBudgetOptions };

/** The names `createAccountBudget` takes: a misspelt one (`requestPerMinute`) would leave the account's default limit unsaid. */
const BUDGET_OPTION_NAMES: readonly string[] = [...Object.keys(DEFAULTS.budget), 'scheduler', 'durations', 'ledger'];

/**
 * Creates an account budget: the queue (priorities, runs in turn) and its waiting promises, with at
 * most one timer and only while requests wait, over the account's record — in memory by default, or
 * kept elsewhere (`createRedisBudget` is this budget with the account in Redis). Every client given
 * it shares it — one count per window for the account, priorities and fairness across all their
 * runs. A client made without one creates its own.
 *
 * @example
 * ```ts
 * const budget = createAccountBudget({ requestsPerMinute: 100, requestsPerDay: 10_000 });
 * const a = createClient({ apiKey, baseUrl, budget });
 * const b = createClient({ apiKey, baseUrl, budget }); // a and b never send more than 100 a minute together
 * budget.state$.subscribe((state) => console.log(`${state.day.used} used today, ${state.day.remaining} left`));
 * ```
 */
export function createAccountBudget(options: AccountBudgetOptions & { readonly ledger?: MemoryLedger } = {}): AccountBudget {
  knownKeys('budget', objectArgument('options', options), BUDGET_OPTION_NAMES);
  schedulerArgument('scheduler', options.scheduler);
  return budgetShell(options, undefined);
}

/**
 * The same budget with the account shared by several processes through `shared` (shared-account.ts):
 * `createRedisBudget` is this with the account in Redis. Its options are checked by its caller.
 */
export function createSharedAccountBudget(options: AccountBudgetOptions, shared: SharedLink): AccountBudget {
  return budgetShell(options, shared);
}

function budgetShell(options: AccountBudgetOptions & { readonly ledger?: MemoryLedger }, shared: SharedLink | undefined): AccountBudget {
  const { scheduler = asyncScheduler, durations, ledger, ...numbers } = options;
  // The budget's clock. Real time is the wall clock, which may step back (NTP): the budget's time never does.
  // A shared account's clock may run ahead of this process's (another process's clock is ahead): the
  // budget then lives on the account's, so that what it counts and waits for is in the record's time.
  let latest = -Infinity;
  let behindAccount = 0;
  const now = (): number => {
    latest = Math.max(latest, scheduler.now() + behindAccount);
    return latest;
  };
  const follow = (accountNow: number): void => {
    behindAccount = Math.max(behindAccount, accountNow - scheduler.now());
  };
  // The account's record and rules live behind the ledger; the queue, the waiters and the timer here.
  // With a shared account the core decides on a mirror of its record, and each request it lets
  // through is then held by the account's link (shared-account.ts) until the account grants it.
  const mirror = shared === undefined ? undefined : createMemoryLedger();
  const core = new BudgetCore(numbers, mirror ?? ledger, shared?.process);
  const waiters = new Map<number, Waiter>();
  const observers = new Set<Subscriber<BudgetState>>();
  let nextId = 0;
  let timer: { readonly handle: Subscription; readonly at: number } | undefined;
  let closed = false;
  let publishing = false;
  let changes = 0;
  let published = 0;

  function dispatch(event: BudgetEvent): void {
    const at = now();
    const result = core.step(event, at);
    for (const id of result.released) {
      const waiter = waiters.get(id);
      waiters.delete(id);
      if (waiter === undefined) continue;
      if (link === undefined) waiter.release();
      else link.hold(id, waiter, at);
    }
    for (const refusal of result.refused) {
      const waiter = waiters.get(refusal.id);
      waiters.delete(refusal.id);
      if (waiter !== undefined) waiter.refuse(dayIsSpent(waiter.ticket, refusal, at));
    }
    schedule(result.wakeAt, at);
    publish();
    if (result.released.length > 0 || result.refused.length > 0) drainedCheck();
  }

  function schedule(wakeAt: number | undefined, at: number): void {
    if (timer !== undefined && timer.at === wakeAt) return;
    timer?.handle.unsubscribe();
    timer = undefined;
    if (wakeAt === undefined || closed) return;
    // A timer keeps at most 2^31 − 1 ms; a longer one fires at once (and would spin). Waking early
    // only steps the core again, which sets the next timer.
    const handle = scheduler.schedule(() => {
      timer = undefined;
      dispatch({ type: 'wake' });
    }, Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(wakeAt - at))));
    timer = { handle, at: wakeAt };
  }

  // The state is built only when someone watches it (building it is O(log n), but a budget nobody
  // watches need not pay even that per request). A subscriber may acquire or report while we publish:
  // rather than publish from inside the publication (subscribers after it would then see the newer
  // state first, the older one last), the outer loop publishes again once the current round is over,
  // so every subscriber sees states in order.
  function publish(): void {
    changes += 1;
    if (publishing || observers.size === 0) return;
    publishing = true;
    try {
      while (published !== changes) {
        published = changes;
        const state = budgetState(core, now());
        for (const observer of [...observers]) observer.next(state);
      }
    } finally {
      publishing = false;
    }
  }

  function leaveQueue(id: number): void {
    waiters.delete(id);
    dispatch({ type: 'cancel', id });
    link?.left(id);
  }

  function drainedCheck(): void {
    link?.drainedCheck();
  }

  /** Whether `ticket` is still taken: not once closed; while `close()` still sends the aborts held (a shared account), an abort that comes joins them (a process shutting down unsubscribes its runs after it asked the budget to close). */
  function takes(ticket: GateTicket): boolean {
    return !closed && (link?.closing !== true || fairClassOf(ticket.priority) === 'abort');
  }

  function completeObservers(): void {
    for (const observer of [...observers]) observer.complete();
    observers.clear();
  }

  /** Queues a waiter; returns its handle. One function for every request: no closure per wait. */
  function join(waiter: Waiter): number {
    const id = nextId++;
    waiters.set(id, waiter);
    link?.joined(id, waiter);
    dispatch({ type: 'enqueue', id, ticket: waiter.ticket });
    return id;
  }

  /** The waiter of handle `id` leaves (its signal aborted): out of the queue, or out of those held for the shared account. */
  function withdraw(id: number): void {
    if (link?.withdraw(id) !== true) leaveQueue(id);
    drainedCheck();
  }

  const state$ = new Observable<BudgetState>((subscriber) => {
    subscriber.next(budgetState(core, now()));
    if (closed) {
      subscriber.complete();
      return undefined;
    }
    observers.add(subscriber);
    return () => observers.delete(subscriber);
  });

  const link =
    shared === undefined || mirror === undefined
      ? undefined
      : shared.link({
          scheduler,
          core,
          mirror,
          waiters,
          now,
          follow,
          dispatch,
          publish,
          leaveQueue,
          get closed() {
            return closed;
          },
          stop() {
            closed = true;
            schedule(undefined, now());
          },
          completeObservers,
        });

  return {
    acquire(ticket: GateTicket, signal?: AbortSignal): Promise<void> {
      if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
      if (!takes(ticket)) return Promise.reject(closedError());
      return waitForTurn(ticket, signal, join, withdraw);
    },
    wait(ticket: GateTicket, turn: GateTurn): () => void {
      if (!takes(ticket)) {
        turn.refuse(closedError());
        return NO_WITHDRAWAL;
      }
      const waiting = new Waiting(ticket, turn);
      const id = join(waiting);
      return () => {
        if (waiting.settle()) withdraw(id);
      };
    },
    report(report: GateReport): void {
      dispatch({ type: 'report', report });
      link?.reported(report);
    },
    snapshot: () => budgetState(core, now()),
    needRead: (key, need) => core.need(key, need),
    ...(durations === undefined ? {} : { durations }),
    state$,
    close(): Promise<void> {
      if (link !== undefined) return link.close();
      if (closed) return Promise.resolve();
      closed = true;
      for (const [id, waiter] of [...waiters]) {
        waiters.delete(id);
        waiter.refuse(closedError());
        dispatch({ type: 'cancel', id });
      }
      schedule(undefined, now());
      completeObservers();
      return Promise.resolve();
    },
  };
}

/**
 * Whether `budget` is an account budget (this one or another implementation, such as Redis's) rather
 * than the options to make one: `createClient({ budget })` takes either.
 *
 * @example
 * ```ts
 * const budget = isAccountBudget(given) ? given : createAccountBudget({ ...given, scheduler });
 * ```
 */
export function isAccountBudget(budget: RequestBudgetOptions | AccountBudget): budget is AccountBudget {
  return typeof (budget as Partial<AccountBudget>).acquire === 'function';
}

/** A start the day can no longer take (service.md §2.1: 10,000 a day): refused before it is sent. */
export function dayIsSpent(ticket: GateTicket, refusal: Refusal, now: number): RateLimitError {
  const minutes = Math.max(1, Math.ceil((refusal.resetAt - now) / 60_000));
  return new RateLimitError({
    endpoint: ticket.endpoint,
    status: 429,
    errMsg: `the day's requests are spent: the request budget refused this start before sending it; the day's window resets within ${minutes} min`,
    rateLimit: { remainingPerDay: 0 },
    scope: 'day',
    resetAt: refusal.resetAt,
  });
}

/** A request refused because the budget is closed. */
export function closedError(): FlowstreamError {
  return new FlowstreamError('The request budget is closed', 'BUDGET_CLOSED');
}

/** A request waiting for its turn: let go (`release`) or refused with an error. */
export interface Waiter {
  readonly ticket: GateTicket;
  release(): void;
  refuse(error: Error): void;
}

/**
 * An account kept elsewhere, as a budget takes it (`shareAccount` of shared-account.ts): the process's
 * part in the account's record, and the link made over the budget's shell.
 */
export interface SharedLink {
  readonly process: AccountConfig['process'];
  link(shell: BudgetShell): AccountLink;
}

/** What an account's link sees and drives of the budget: its clock (`scheduler`), core, mirror and waiters, and its steps. */
export interface BudgetShell {
  readonly scheduler: SchedulerLike;
  readonly core: BudgetCore;
  /** The core's copy of the account's record. */
  readonly mirror: MemoryLedger;
  /** The requests waiting in the queue, by handle. */
  readonly waiters: Map<number, Waiter>;
  readonly now: () => number;
  /** The account's clock read `accountNow` just now: the budget's clock keeps up with it from then on. */
  readonly follow: (accountNow: number) => void;
  readonly dispatch: (event: BudgetEvent) => void;
  readonly publish: () => void;
  /** Takes the waiter of `id` out of the queue (the link hears it: `AccountLink.left`). */
  readonly leaveQueue: (id: number) => void;
  readonly closed: boolean;
  /** Closes the budget: no timer any more, and nothing more is taken. */
  stop(): void;
  completeObservers(): void;
}

/** What a budget asks of an account's link, at each step of a request. */
export interface AccountLink {
  /** The core let the waiter of `id` through: held until the account grants it. */
  hold(id: number, waiter: Waiter, at: number): void;
  /** A waiter joined the queue. */
  joined(id: number, waiter: Waiter): void;
  /** The waiter of `id` left the queue. */
  left(id: number): void;
  /** The waiter of `id` leaves: whether it was held (and is no more). */
  withdraw(id: number): boolean;
  reported(report: GateReport): void;
  /** Tells whoever waits for the budget to drain when nothing waits or is held any more. */
  drainedCheck(): void;
  /** Whether the budget is closing: only aborts are still taken. */
  readonly closing: boolean;
  close(): Promise<void>;
}

/**
 * One wait, as one object: the waiter the budget queues and the listener of its signal's abort
 * (`handleEvent`), so that a request waiting holds this object and its promise, not a closure per role.
 */
class Turn implements Waiter {
  /** The budget's handle on it, once queued. */
  id = -1;
  readonly #signal: AbortSignal | undefined;
  readonly #resolve: () => void;
  readonly #reject: (reason: unknown) => void;
  readonly #withdraw: (id: number) => void;

  constructor(
    readonly ticket: GateTicket,
    signal: AbortSignal | undefined,
    resolve: () => void,
    reject: (reason: unknown) => void,
    withdraw: (id: number) => void,
  ) {
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#withdraw = withdraw;
  }

  /** The signal aborted: the wait leaves the queue and rejects with the signal's reason. */
  handleEvent(): void {
    this.#withdraw(this.id);
    this.#reject(this.#signal?.reason);
  }

  release(): void {
    this.#signal?.removeEventListener('abort', this);
    this.#resolve();
  }

  refuse(error: Error): void {
    this.#signal?.removeEventListener('abort', this);
    this.#reject(error);
  }
}

const ONCE: AddEventListenerOptions = { once: true };

/**
 * A request waiting through `wait`: its turn told once. Leaving costs no abort event, DOMException or
 * Promise, which a wait on an AbortSignal does (thousands of runs' reads wait at once, and leave at
 * once when their runs are unsubscribed).
 */
class Waiting implements Waiter {
  #waiting = true;
  readonly #turn: GateTurn;

  constructor(
    readonly ticket: GateTicket,
    turn: GateTurn,
  ) {
    this.#turn = turn;
  }

  /** Ends the wait; whether it was still waiting. */
  settle(): boolean {
    const was = this.#waiting;
    this.#waiting = false;
    return was;
  }

  release(): void {
    if (this.settle()) this.#turn.release();
  }

  refuse(error: Error): void {
    if (this.settle()) this.#turn.refuse(error);
  }
}

const NO_WITHDRAWAL = (): void => undefined;

/**
 * A request's wait for the budget as a Promise, for every account budget alike (in memory, in
 * Redis): `join` queues the waiter and returns its handle, `withdraw` takes that handle out again;
 * aborting `signal` withdraws it and rejects with the signal's reason; the abort listener goes as soon
 * as the wait ends.
 */
export function waitForTurn(ticket: GateTicket, signal: AbortSignal | undefined, join: (waiter: Waiter) => number, withdraw: (id: number) => void): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
  return new Promise<void>((resolve, reject) => {
    const turn = new Turn(ticket, signal, resolve, reject, withdraw);
    signal?.addEventListener('abort', turn, ONCE);
    turn.id = join(turn);
  });
}

export type { BudgetState, DayView };

const HOUR_MS = 3_600_000;

/**
 * What one process shows of the budget besides the account: its requests in flight, its queue and
 * the polls it let through per key.
 *
 * @example
 * ```ts
 * const local: LocalView = { inFlight: 0, queued: { total: 0, byPriority: core.queue.depths() }, cadences: {} };
 * ```
 */
interface LocalView {
  readonly inFlight: number;
  readonly queued: BudgetState['queued'];
  readonly cadences: Readonly<Record<string, KeyCadence>>;
}

/**
 * The public view of the budget at `now`. Built on demand, in O(log n): counts come from the send
 * log, depths from counters, and the per-run cadences are rebuilt only after they changed.
 *
 * @example
 * ```ts
 * const snapshot = budgetState(core, clock.now());
 * ```
 */
export function budgetState(core: BudgetCore, now: number): BudgetState {
  const { account } = core;
  return accountState(account.record, account.config, now, {
    inFlight: account.inFlight.size,
    queued: { total: core.queue.size, byPriority: core.queue.depths() },
    cadences: core.cadences.record(),
  });
}

/**
 * The public view of an account's record at `now`, with one process's own figures: the same for a
 * budget in memory and one shared through Redis.
 *
 * @example
 * ```ts
 * const state = accountState(record, config, now, local);
 * ```
 */
export function accountState(record: AccountRecord, config: AccountConfig, now: number, local: LocalView): BudgetState {
  const limits = accountLimits(record, config);
  const usedThisMinute = sentWithin(record, now, MINUTE_MS, config);
  const usedToday = sentWithin(record, now, DAY_MS, config);
  return {
    at: now,
    limitPerMinute: limits.perMinute,
    limitPerDay: limits.perDay,
    usedThisMinute,
    remainingThisMinute: Math.max(0, limits.perMinute - usedThisMinute),
    usedToday,
    remainingToday: Math.max(0, limits.perDay - usedToday),
    day: dayView(record, config, usedToday, now),
    server: record.server,
    inFlight: local.inFlight,
    queued: local.queued,
    ...(record.pausedUntil > now ? { pausedUntil: record.pausedUntil } : {}),
    followingServer: isActive(record.minuteCap, now) || isActive(record.dayCap, now),
    nextSendAt: Math.max(now, readyAt(record, 'reads', now, config)),
    cadences: local.cadences,
  };
}

function dayView(record: AccountRecord, config: AccountConfig, used: number, now: number): DayView {
  const limits = accountLimits(record, config);
  const dayCap = record.dayCap !== null && now < record.dayCap.until ? record.dayCap : undefined;
  const ourRemaining = limits.perDay - sentWithin(record, now, limits.dayWindowMs, config);
  const remaining = Math.max(0, Math.min(ourRemaining, dayCap?.hardAllowance ?? Infinity));
  const bucket = dayBucketAt(record.dayBucket ?? FULL_DAY_BUCKET, now, limits);
  const exhaustedAt = dayBucketEmptyAt(record.dayBucket ?? FULL_DAY_BUCKET, now, sentWithin(record, now, HOUR_MS, config), limits);
  return {
    used,
    remaining,
    reserve: limits.dayReserve,
    burst: Math.max(0, Math.floor(Math.min(bucket.tokens, pacedRemaining(record, now, config)))),
    // As of the last send, departure or answer: the bucket's refill.
    sustainablePerMinute: bucket.perMs * 60_000,
    ...(exhaustedAt === undefined ? {} : { exhaustedAt }),
  };
}

function isActive(cap: { readonly until: number } | null, now: number): boolean {
  return cap !== null && now < cap.until;
}
