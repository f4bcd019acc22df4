import { asyncScheduler, Observable } from 'rxjs';
import type { Subscriber, Subscription } from 'rxjs';
import type { AccountBudget, BudgetState, DayView } from '../domain/budget.js';
import type { Logger } from '../domain/model.js';
import type { AccountBudgetOptions, RequestBudgetOptions } from '../domain/options.js';
import type { GateReport, GateTicket, GateTurn } from '../domain/requests.js';
import { RateLimitError } from '../errors/api-errors.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { MAX_TIMER_MS } from '../http/options.js';
import { accountLimits, afterSend, dayBucketAt, dayBucketEmptyAt, FULL_DAY_BUCKET, identicalStartKey, pacedRemaining, readyAt, sentWithin } from './account-rules.js';
import type { AccountAnswer, AccountConfig, AccountRecord, Verdict } from './account-rules.js';
import { fairClassOf } from './fair-queue.js';
import type { FairClass } from './fair-queue.js';
import { createMemoryLedger } from './ledger.js';
import type { MemoryLedger } from './ledger.js';
import { BudgetCore } from './scheduler.js';
import type { KeyCadence, Refusal, SchedulerEvent } from './scheduler.js';

/**
 * An account kept in a store shared by several processes (Redis), asked asynchronously: this
 * process's config, and the rule book's steps as the store applies them atomically.
 */
export interface SharedAccount {
  readonly config: AccountConfig;
  /** The verdict on one request of `klass` now (`demand`: this process's runs waiting to read; for a start or abort, its starts and aborts waiting), with the record after it and the account's time. */
  request(klass: FairClass, demand: number, startKey: string | undefined): Promise<Verdict & { readonly now: number; readonly record: AccountRecord }>;
  report(answer: AccountAnswer): Promise<AccountRecord>;
  /** This process has nothing waiting, or leaves. */
  leave(): Promise<AccountRecord>;
  /** The key an identical start's mark has in the shared record (a digest: the body may hold secrets). */
  markKey(startKey: string): string;
  /** How long the store may take to answer before what cannot wait is told it is away. */
  readonly unavailableAfterMs: number;
  readonly logger?: Logger | undefined;
}

/** How long a request told to wait by the shared account waits at most before it asks again: other processes change the account too. */
const RECHECK_MS = 5_000;
/** How many times an answer is told to the shared account while it is away before the lease is left to free it. */
const REPORT_ATTEMPTS = 10;
/** How soon a request is asked again after the shared account could not be reached. */
const UNREACHABLE_RETRY_MS = 1_000;

export type { AccountBudget, AccountBudgetOptions };

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
export function createAccountBudget(options: AccountBudgetOptions & { readonly ledger?: MemoryLedger; readonly shared?: SharedAccount } = {}): AccountBudget {
  const { scheduler = asyncScheduler, durations, ledger, shared, ...numbers } = options;
  // The budget's clock. Real time is the wall clock, which may step back (NTP): the budget's time never does.
  let latest = Number.NEGATIVE_INFINITY;
  const now = (): number => {
    latest = Math.max(latest, scheduler.now());
    return latest;
  };
  // The account's record and rules live behind the ledger; the queue, the waiters and the timer here.
  // With a shared account the scheduler decides on a mirror of its record, and each request it lets
  // through is then asked of the shared account (`ask`) before it goes.
  const mirror = shared === undefined ? ledger : createMemoryLedger();
  const core = new BudgetCore(numbers, mirror, shared?.config.process);
  const waiters = new Map<number, Waiter>();
  const observers = new Set<Subscriber<BudgetState>>();
  let nextId = 0;
  let timer: { readonly handle: Subscription; readonly at: number } | undefined;
  let closed = false;
  // Read through a function where TypeScript does not see close() setting it during an await.
  const isClosed = (): boolean => closed;
  let publishing = false;
  let changes = 0;
  let published = 0;

  function dispatch(event: SchedulerEvent): void {
    const at = now();
    const result = core.step(event, at);
    for (const id of result.released) {
      const waiter = waiters.get(id);
      waiters.delete(id);
      if (waiter === undefined) continue;
      if (shared === undefined) waiter.release();
      else hold(id, waiter, at);
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
    // only steps the scheduler again, which sets the next timer.
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

  // ---- The shared account: requests let through by the scheduler, held until the account grants them.

  interface Held {
    readonly id: number;
    readonly waiter: Waiter;
    readonly klass: FairClass;
    readonly startKey: string | undefined;
    readonly at: number;
  }
  /** Let through by the scheduler, waiting for the shared account's grant: highest class first, then oldest. */
  const held: Held[] = [];
  /** When each request the shared account granted went: its answer's anchor (service.md §2.1). */
  const grantedAt = new Map<GateTicket, number>();
  /** One call to the shared account at a time, so an outage never piles calls up behind it. */
  let asking = false;
  /** Something was let through or left while the account was being asked: ask again at once. */
  let changed = false;
  const changedMeanwhile = (): boolean => changed;
  let retry: Subscription | undefined;
  let callDeadline: Subscription | undefined;
  /** Whether the shared account answered the last call within `unavailableAfterMs`. */
  let reachable = true;
  const isReachable = (): boolean => reachable;
  /** This process's reads are declared to the account (withdrawn once nothing waits). */
  let declared = false;
  /** Requests that came while the account was away: each is given up once it has waited `unavailableAfterMs`. */
  const giveUps = new Map<number, Subscription>();
  /**
   * What the service's last count (its `X-RateLimit-Remaining-*` headers, service.md §2.1) leaves for
   * this process: while the shared account is away no process of the account is granted anything, so
   * this count is the account's; `close()` spends it on held aborts.
   */
  let serviceLeft: number | undefined;
  let closing: Promise<void> | undefined;
  /** Told when nothing waits or is held any more, while `close()` waits for the aborts. */
  let drained: (() => void) | undefined;

  function hold(id: number, waiter: Waiter, at: number): void {
    const klass = fairClassOf(waiter.ticket.priority);
    const rank = RANKS[klass];
    const index = held.findIndex((other) => RANKS[other.klass] > rank);
    const startKey = identicalStartKey(waiter.ticket);
    remember(startKey);
    held.splice(index < 0 ? held.length : index, 0, { id, waiter, klass, startKey, at });
    changed = true;
    void ask();
  }

  /** Takes `entry` out of the held ones; it was not sent, so the scheduler is told no answer will come. */
  function unhold(entry: Held): void {
    const index = held.indexOf(entry);
    if (index >= 0) held.splice(index, 1);
    giveUps.get(entry.id)?.unsubscribe();
    giveUps.delete(entry.id);
    dispatch({ type: 'report', report: { ticket: entry.waiter.ticket, httpStatus: undefined, rateLimit: {} } });
  }

  /** The identical-start keys this process used, by their key in the shared record. */
  const startKeys = new Map<string, string>();
  function remember(startKey: string | undefined): void {
    if (shared !== undefined && startKey !== undefined) startKeys.set(shared.markKey(startKey), startKey);
  }

  /**
   * The shared account's record, with what this process holds counted as sent, is the scheduler's
   * mirror. Its identical-start marks are by digest: the mirror has those of the keys this process
   * used (another process's marks show in the shared account's verdict). A mark the mirror has and the
   * shared record lacks (a start refused while the account was away never reached it; pruned there
   * first; Redis lost the account) stays in the mirror until it expires there: the scheduler offers an
   * identical start waiting in line when its key's mark expires, and one that vanished would never.
   */
  function adopt(record: AccountRecord): void {
    if (mirror === undefined || shared === undefined) return;
    const starts: Record<string, AccountRecord['starts'][string]> = {};
    for (const [digest, mark] of Object.entries(record.starts)) {
      const startKey = startKeys.get(digest);
      if (startKey !== undefined) starts[startKey] = mark;
    }
    for (const [startKey, mark] of Object.entries(mirror.record.starts)) starts[startKey] ??= mark;
    for (const digest of [...startKeys.keys()]) if (record.starts[digest] === undefined && !held.some((entry) => entry.startKey === startKeys.get(digest))) startKeys.delete(digest);
    let next: AccountRecord = { ...record, starts };
    for (const entry of held) next = afterSend(next, entry.klass, entry.startKey, Math.max(entry.at, next.at), shared.config);
    mirror.replace(next);
  }

  function demand(): number {
    const depths = core.queue.depths();
    return depths.status + depths.output + held.filter((entry) => entry.klass === 'reads').length;
  }

  /** This process's starts and aborts waiting, here or for the shared account: what a start's or abort's claim on the account's pace counts. */
  function urgent(): number {
    const depths = core.queue.depths();
    return depths.abort + depths.start + held.filter((entry) => entry.klass === 'abort' || entry.klass === 'start').length;
  }

  /**
   * Asks the shared account for the first request held, one call at a time. With nothing held or
   * waiting, it withdraws this process's reads from the account — and while the account is away,
   * that call is the one that finds it back.
   */
  async function ask(): Promise<void> {
    if (shared === undefined || asking || closed) return;
    const entry = held[0];
    // With nothing held, the reads are withdrawn only once none waits here either (the scheduler lets
    // them through at this process's share: between two of them this process keeps its turn).
    if (entry === undefined && isReachable() && (!declared || demand() > 0)) return;
    asking = true;
    changed = false;
    retry?.unsubscribe();
    retry = undefined;
    // The call is not abandoned at its deadline: it stays the one call on its way, and its answer
    // (when the account is back) is used. Only what cannot wait is told that it is away. A process
    // that stalled runs its timers before it reads the answers that came meanwhile: they get one turn.
    callDeadline = scheduler.schedule(() => {
      callDeadline = scheduler.schedule(unreachable, 0);
    }, shared.unavailableAfterMs);
    let answer: (Verdict & { readonly now: number; readonly record: AccountRecord }) | undefined;
    try {
      if (entry === undefined) await shared.leave();
      else {
        if (entry.klass === 'reads') declared = true;
        answer = await shared.request(entry.klass, entry.klass === 'abort' || entry.klass === 'start' ? urgent() : demand(), entry.startKey);
      }
    } catch {
      // The store refused the call (a client that gives up on commands while it is away): asked again soon.
      endCallDeadline();
      asking = false;
      unreachable();
      if (!isClosed()) retry = scheduler.schedule(() => void ask(), UNREACHABLE_RETRY_MS);
      return;
    }
    endCallDeadline();
    asking = false;
    reachable = true;
    // The account answers: what came while it was away waits as any request does.
    for (const giveUp of giveUps.values()) giveUp.unsubscribe();
    giveUps.clear();
    if (isClosed()) return;
    if (entry === undefined || answer === undefined) {
      declared = false;
      void ask();
      return;
    }
    const stillHeld = held.includes(entry);
    if (answer.verdict === 'granted') {
      // The request goes if it is still held (it may have left meanwhile: the send it was granted is
      // then counted and unused, never the other way round).
      if (stillHeld) {
        held.splice(held.indexOf(entry), 1);
        grantedAt.set(entry.waiter.ticket, now());
        if (serviceLeft !== undefined) serviceLeft -= 1;
        entry.waiter.release();
      }
      adopt(answer.record);
      // Left meanwhile: the account counts a send whose answer will never come. It is told so at once,
      // or an identical start's mark would stay taken (for every process) until this process's lease ran out.
      if (!stillHeld) tellShared({ sentAt: answer.now, inFlight: 0, httpStatus: undefined, rateLimit: {}, startKey: entry.startKey });
    } else if (answer.verdict === 'refused') {
      adopt(answer.record);
      if (stillHeld) {
        unhold(entry);
        entry.waiter.refuse(dayIsSpent(entry.waiter.ticket, { id: entry.id, resetAt: answer.at }, answer.now));
      }
    } else {
      adopt(answer.record);
      // Another process's answer may free the account before then (an identical start answered, a
      // cap lifted): asked again at least every few seconds; a request let through meanwhile at once.
      if (!changedMeanwhile()) retry = scheduler.schedule(() => void ask(), Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(Math.min(answer.at - answer.now, RECHECK_MS)))));
    }
    dispatch({ type: 'wake' });
    drainedCheck();
    if (answer.verdict !== 'wait' || changedMeanwhile()) void ask();
  }

  /**
   * Tells the shared account an answer (a 429 pauses every process, an identical start's mark is freed).
   * While the store is away it is told again, every `UNREACHABLE_RETRY_MS`, up to `REPORT_ATTEMPTS`
   * times; past that the process's lease frees what the answer would have, and the loss is logged.
   */
  const reportRetries = new Set<Subscription>();
  function tellShared(answer: AccountAnswer, attempt = 1): void {
    if (shared === undefined) return;
    shared.report(answer).then(
      (record) => {
        adopt(record);
        dispatch({ type: 'wake' });
      },
      (error: unknown) => {
        if (isClosed()) return;
        if (attempt >= REPORT_ATTEMPTS) {
          shared.logger?.warn('flowstream: the shared request budget could not be told an answer; its lease will free what the answer would have', { httpStatus: answer.httpStatus, error });
          return;
        }
        const again = scheduler.schedule(() => {
          reportRetries.delete(again);
          tellShared(answer, attempt + 1);
        }, UNREACHABLE_RETRY_MS);
        reportRetries.add(again);
      },
    );
  }

  function endCallDeadline(): void {
    callDeadline?.unsubscribe();
    callDeadline = undefined;
  }

  /**
   * The shared account did not answer in time: fail closed — nothing is sent without its grant, and
   * what cannot wait fails with a typed error rather than hang. Aborts wait for it (service.md §3.5:
   * an execution left running spends credits), however long it is away.
   */
  function unreachable(): void {
    if (shared === undefined) return;
    reachable = false;
    for (const entry of [...held]) {
      if (entry.klass === 'abort') continue;
      unhold(entry);
      entry.waiter.refuse(unavailableError(shared.unavailableAfterMs));
    }
    for (const [id, waiter] of [...waiters]) {
      if (fairClassOf(waiter.ticket.priority) === 'abort') continue;
      leaveQueue(id);
      waiter.refuse(unavailableError(shared.unavailableAfterMs));
    }
    publish();
    drainedCheck();
  }

  function leaveQueue(id: number): void {
    giveUps.get(id)?.unsubscribe();
    giveUps.delete(id);
    waiters.delete(id);
    dispatch({ type: 'cancel', id });
    // Maybe the last read waiting here: the account hears that this process has none any more.
    if (shared !== undefined) void ask();
  }

  function drainedCheck(): void {
    if (waiters.size === 0 && held.length === 0) drained?.();
  }

  /**
   * Leaves the shared account within `unavailableAfterMs`: held aborts get their grant until then;
   * what is still held when the account is away goes on the service's own count, and each abort not
   * sent is refused and logged with its execution id.
   */
  async function leaveShared(account: SharedAccount): Promise<void> {
    for (const [id, waiter] of [...waiters]) {
      if (fairClassOf(waiter.ticket.priority) === 'abort') continue;
      leaveQueue(id);
      waiter.refuse(closedError());
    }
    for (const entry of [...held]) {
      if (entry.klass === 'abort') continue;
      unhold(entry);
      entry.waiter.refuse(closedError());
    }
    publish();
    let deadlineTimer: Subscription | undefined;
    const deadline = new Promise<void>((resolve) => {
      deadlineTimer = scheduler.schedule(() => {
        resolve();
      }, account.unavailableAfterMs);
    });
    if (waiters.size > 0 || held.length > 0) {
      await Promise.race([
        deadline,
        new Promise<void>((resolve) => {
          drained = resolve;
        }),
      ]);
      drained = undefined;
    }
    closed = true;
    schedule(undefined, now());
    retry?.unsubscribe();
    for (const again of reportRetries) again.unsubscribe();
    reportRetries.clear();
    endCallDeadline();
    const left = [...held.map((entry) => entry.waiter), ...waiters.values()];
    held.length = 0;
    waiters.clear();
    for (const waiter of left) {
      if (!isReachable() && serviceLeft !== undefined && serviceLeft > 0) {
        serviceLeft -= 1;
        waiter.release();
        continue;
      }
      const executionId = waiter.ticket.key;
      account.logger?.warn('flowstream: the request budget closed before this abort could be sent: the execution may still be running', { executionId, redis: isReachable() ? 'reachable' : 'unreachable' });
      waiter.refuse(closedError(executionId));
    }
    for (const observer of [...observers]) observer.complete();
    observers.clear();
    if (isReachable()) await Promise.race([account.leave().catch(() => undefined), deadline]);
    deadlineTimer?.unsubscribe();
  }

  /** Queues a waiter; returns its handle. One function for every request: no closure per wait. */
  function join(waiter: Waiter): number {
    const id = nextId++;
    waiters.set(id, waiter);
    // The shared account is away: what cannot wait for it waits at most `unavailableAfterMs`.
    if (shared !== undefined && !reachable && fairClassOf(waiter.ticket.priority) !== 'abort') {
      giveUps.set(
        id,
        scheduler.schedule(() => {
          const entry = held.find((other) => other.id === id);
          if (entry !== undefined) unhold(entry);
          else leaveQueue(id);
          waiter.refuse(unavailableError(shared.unavailableAfterMs));
          publish();
          drainedCheck();
        }, shared.unavailableAfterMs),
      );
    }
    dispatch({ type: 'enqueue', id, ticket: waiter.ticket });
    return id;
  }

  /** The waiter of handle `id` leaves (its signal aborted): out of the queue, or out of those held for the shared account. */
  function withdraw(id: number): void {
    const entry = shared === undefined ? undefined : held.find((other) => other.id === id);
    if (entry !== undefined) unhold(entry);
    else leaveQueue(id);
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

  return {
    acquire(ticket: GateTicket, signal?: AbortSignal): Promise<void> {
      if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
      // While `close()` still sends the aborts held (a shared account), an abort that comes joins them:
      // a process shutting down unsubscribes its runs after it asked the budget to close.
      if (closed || (closing !== undefined && fairClassOf(ticket.priority) !== 'abort')) return Promise.reject(closedError());
      return waitForTurn(ticket, signal, join, withdraw);
    },
    wait(ticket: GateTicket, turn: GateTurn): () => void {
      if (closed || (closing !== undefined && fairClassOf(ticket.priority) !== 'abort')) {
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
      if (shared === undefined) return;
      const { rateLimit } = report;
      const counts = [rateLimit.remainingPerMinute, rateLimit.remainingPerDay].filter((count) => count !== undefined);
      if (counts.length > 0) serviceLeft = Math.min(...counts) - core.account.inFlight.size;
      const answer = core.account.lastAnswer;
      const sentAt = grantedAt.get(report.ticket);
      grantedAt.delete(report.ticket);
      if (answer === undefined) return;
      remember(answer.startKey);
      tellShared({ ...answer, sentAt: sentAt ?? answer.sentAt });
    },
    snapshot: () => budgetState(core, now()),
    needRead: (key, need) => core.need(key, need),
    ...(durations === undefined ? {} : { durations }),
    state$,
    close(): Promise<void> {
      if (shared !== undefined) {
        closing ??= leaveShared(shared);
        return closing;
      }
      if (closed) return Promise.resolve();
      closed = true;
      for (const [id, waiter] of [...waiters]) {
        waiters.delete(id);
        waiter.refuse(closedError());
        dispatch({ type: 'cancel', id });
      }
      schedule(undefined, now());
      for (const observer of [...observers]) observer.complete();
      observers.clear();
      return Promise.resolve();
    },
  };
}

/** The order in which held requests are asked of a shared account. */
const RANKS: Readonly<Record<FairClass, number>> = { abort: 0, start: 1, interactive: 2, reads: 3 };

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
function dayIsSpent(ticket: GateTicket, refusal: Refusal, now: number): RateLimitError {
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

function closedError(executionId?: string): FlowstreamError {
  if (executionId === undefined) return new FlowstreamError('The request budget is closed', 'BUDGET_CLOSED');
  return new FlowstreamError(`The request budget closed before the abort of ${executionId} could be sent: the execution may still be running`, 'BUDGET_CLOSED');
}

function unavailableError(afterMs: number): FlowstreamError {
  return new FlowstreamError(`Redis did not answer the request budget within ${afterMs} ms: nothing was sent`, 'BUDGET_UNAVAILABLE');
}

/** A request waiting for its turn: let go (`release`) or refused with an error. */
export interface Waiter {
  readonly ticket: GateTicket;
  release(): void;
  refuse(error: Error): void;
}

/**
 * One wait, as one object: the waiter the budget queues and the listener of its signal's abort
 * (`handleEvent`), so that a request waiting holds this object and its promise, not a closure per role.
 */
class Turn implements Waiter {
  /** The budget's handle on it, once queued. */
  id = -1;

  constructor(
    readonly ticket: GateTicket,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: () => void,
    private readonly reject: (reason: unknown) => void,
    private readonly withdraw: (id: number) => void,
  ) {}

  /** The signal aborted: the wait leaves the queue and rejects with the signal's reason. */
  handleEvent(): void {
    this.withdraw(this.id);
    this.reject(this.signal?.reason);
  }

  release(): void {
    this.signal?.removeEventListener('abort', this);
    this.resolve();
  }

  refuse(error: Error): void {
    this.signal?.removeEventListener('abort', this);
    this.reject(error);
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

  constructor(
    readonly ticket: GateTicket,
    private readonly turn: GateTurn,
  ) {}

  /** Ends the wait; whether it was still waiting. */
  settle(): boolean {
    const was = this.#waiting;
    this.#waiting = false;
    return was;
  }

  release(): void {
    if (this.settle()) this.turn.release();
  }

  refuse(error: Error): void {
    if (this.settle()) this.turn.refuse(error);
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
  const usedThisMinute = sentWithin(record, now, limits.serviceMinuteMs, config);
  const usedToday = sentWithin(record, now, limits.serviceDayMs, config);
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
  const remaining = Math.max(0, Math.min(ourRemaining, dayCap?.hardAllowance ?? Number.POSITIVE_INFINITY));
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
