import { randomUUID } from 'node:crypto';
import { asyncScheduler, Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { identicalStartKey, newAccountRecord, readsPerMinute, type AccountConfig, type AccountRecord } from '../budget/account-rules.js';
import { accountState } from '../budget/budget-state.js';
import { budgetLimits, type BudgetLimits } from '../budget/limits.js';
import { type Waiter, waitForTurn } from '../budget/waiting-request.js';
import { chooseNext, type ClassHead, FAIR_CLASSES, FairQueue, fairClassOf } from '../budget/fair-queue.js';
import type { AccountBudget, BudgetState, PollHeadroom } from '../domain/budget.js';
import type { Logger } from '../domain/model.js';
import type { RequestBudgetOptions } from '../domain/options.js';
import type { GateReport, GateTicket } from '../domain/requests.js';
import { RateLimitError } from '../errors/api-errors.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { DEFAULTS } from '../domain/options.js';
import { MAX_TIMER_MS, positive, timerDelay } from '../http/options.js';
import { safeLogger } from '../http/safe-logger.js';
import { checkAccountName } from './account-name.js';
import { type Grant, type GrantClass, RedisAccountStore } from './account-store.js';
import { connectRedis, type RedisOption } from './connection.js';
import { createRedisDurations, type RedisDurations, type RedisDurationsOptions } from './durations.js';

/**
 * Options of {@link createRedisBudget}.
 *
 * @example
 * ```ts
 * const options: RedisBudgetOptions = { redis: 'redis://127.0.0.1:6379', account: 'acme-prod' };
 * ```
 */
export interface RedisBudgetOptions extends Pick<RequestBudgetOptions, 'requestsPerMinute' | 'requestsPerDay' | 'safetyMargin' | 'latencyAllowanceMs'> {
  /** A Redis URL (`redis://`, `rediss://`, `redis+unix://`), or an ioredis client (its owner closes it). */
  readonly redis: RedisOption;
  /** The account's name in Redis: every process of the account gives the same. Never the API key. */
  readonly account: string;
  /**
   * How many times as fast as real time the scheduler's clock runs (20 for clients on an emulator
   * 20× faster). Only a guard: the account's clock is the scheduler's, and a process whose clock
   * steps ahead of what Redis's own time allows (× this factor) changes the account at the time
   * Redis allows. Default 1 on real time (no `scheduler`), unchecked with a `scheduler` (a virtual
   * clock need not follow Redis's).
   */
  readonly timeScale?: number;
  /**
   * The client's scheduler: the account's clock (every process of the account gives one on the same
   * clock) and the timers that wait for the grants. Default real time.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * How long Redis may take to answer (ms on the scheduler). Past it, reads, starts and interactive
   * calls waiting for it fail with a `FlowstreamError` coded `BUDGET_UNAVAILABLE` (nothing was sent),
   * and so does each one that comes while Redis stays away, once it has waited as long; the budget
   * serves again as soon as Redis answers. Aborts never fail for
   * it: they wait for Redis, however long it is away. `close()` waits at most this long. Default 30 s,
   * a request's own default timeout.
   */
  readonly unavailableAfterMs?: number;
  /**
   * The account's learned node durations, shared by the fleet through Redis as
   * `budget.durations` (see {@link createRedisDurations}), with the model's bounds or these; `false`
   * for none (each client then learns on its own). Default `true`.
   */
  readonly durations?: boolean | Pick<RedisDurationsOptions, 'window' | 'maxNodes' | 'minSamples' | 'logger'>;
  /** Told of each abort that `close()` could not send (with its `executionId`), and of the durations' troubles unless `durations.logger` is given. */
  readonly logger?: Logger;
}

/**
 * The account budget of a fleet, in Redis: with `close()` to leave the account, and the account's
 * learned durations, which `close()` closes too. `close()` takes at most `unavailableAfterMs`: aborts
 * still waiting get their grant until then; those still held after it are sent on the service's last
 * count when Redis is away, and the others are refused (`BUDGET_CLOSED`, naming the execution) and
 * logged with their `executionId`.
 *
 * @example
 * ```ts
 * await budget.durations?.ready;
 * await budget.close();
 * ```
 */
export interface RedisBudget extends AccountBudget {
  readonly durations?: RedisDurations;
}

/** How long a process's demand counts without news from it: a process killed with -9 is forgotten after this. */
const LEASE_WINDOWS = 2;
/** How long a request told to wait waits at most before it asks again: other processes change the account too. */
const RECHECK_MS = 5_000;
/** How soon a grant is asked again after Redis could not be reached: requests wait, they never go unasked. */
const UNREACHABLE_RETRY_MS = 1_000;

/** Grant classes of the account: a run's status and output reads are one. */
function grantClassOf(ticket: GateTicket): GrantClass {
  switch (fairClassOf(ticket.priority)) {
    case 'abort':
      return 'abort';
    case 'start':
      return 'start';
    case 'interactive':
      return 'interactive';
    case 'reads':
      return 'read';
  }
}

/**
 * One account budget for every process of a fleet: each process keeps its own
 * queue — priorities, runs in turn — and asks Redis, by one atomic Lua script per request, whether the
 * account may send it now: at most the usable count in any window of
 * the service, timed by Redis `TIME`; the day paced with its reserve; the service's caps and a 429's
 * pause shared; identical starts spaced account-wide; each process's share of the reads following how
 * many runs it has waiting. It fails closed: while Redis is unreachable nothing is sent and nothing
 * bursts afterwards; reads, starts and interactive calls fail with `BUDGET_UNAVAILABLE` once Redis has
 * not answered for `unavailableAfterMs`, while aborts wait for it and go once it answers. Its `durations` are the
 * account's learned node durations, shared the same way, which every client given the budget uses.
 *
 * @example
 * ```ts
 * import { createRedisBudget } from 'flowstream/redis';
 * const budget = createRedisBudget({ redis: process.env.REDIS_URL!, account: 'acme-prod' });
 * const client = createClient({ apiKey, baseUrl, budget });
 * // …
 * await budget.close();
 * ```
 */
export function createRedisBudget(options: RedisBudgetOptions): RedisBudget {
  const account = checkAccountName(options.account);
  const timeScale = options.timeScale === undefined ? (options.scheduler === undefined ? 1 : undefined) : positive('timeScale', options.timeScale);
  const unavailableAfterMs = timerDelay('unavailableAfterMs', options.unavailableAfterMs ?? DEFAULTS.timeoutMs);
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = safeLogger(options.logger);
  const limits: BudgetLimits = budgetLimits(options);
  const connection = connectRedis(options.redis);
  let durations: RedisDurations | undefined;
  try {
    const shared = options.durations ?? true;
    durations = shared === false ? undefined : createRedisDurations({ redis: connection.client, account, scheduler, unavailableAfterMs, ...(options.logger === undefined ? {} : { logger: options.logger }), ...(shared === true ? {} : shared) });
  } catch (error) {
    // Bounds that are not: nothing is left connected.
    void connection.close();
    throw error;
  }
  const config: AccountConfig = {
    options: {
      requestsPerMinute: limits.perMinute,
      requestsPerDay: limits.perDay,
      ...(options.safetyMargin === undefined ? {} : { safetyMargin: options.safetyMargin }),
      ...(options.latencyAllowanceMs === undefined ? {} : { latencyAllowanceMs: options.latencyAllowanceMs }),
    },
    process: { id: randomUUID(), leaseMs: LEASE_WINDOWS * limits.minuteWindowMs },
  };
  const store = new RedisAccountStore(connection.client, {
    account,
    config,
    clock: () => scheduler.now(),
    timeScale,
    onClockStep: (aheadMs) => logger?.warn('flowstream: this process\'s clock is ahead of the account\'s by more than Redis\'s time allows: the account keeps to Redis\'s', { aheadMs: Math.round(aheadMs) }),
  });

  const queue = new FairQueue();
  const waiters = new Map<number, Waiter>();
  const inFlight = new Map<GateTicket, number>();
  const observers = new Set<Subscriber<BudgetState>>();
  let nextId = 0;
  let bypassed = 0;
  /** A call to Redis is on its way: one at a time, so an outage never piles calls up behind it. */
  let asking = false;
  /** Something came in while a grant was being asked: the answer may be for a request no longer first. */
  let changed = false;
  // Read through a function: TypeScript does not see the assignment made by acquire() during the await.
  const changedMeanwhile = (): boolean => changed;
  let timer: Subscription | undefined;
  /** The deadline of the call on its way to Redis. */
  let callDeadline: Subscription | undefined;
  /** `close()` was called: new requests are refused; aborts held by then still get their grant until its deadline. */
  let closing: Promise<void> | undefined;
  /** Nothing more is asked of Redis: this handle has left the account. */
  let closed = false;
  // Read through a function: TypeScript does not see close() setting it during an await.
  const isClosed = (): boolean => closed;
  let declared = false;
  /**
   * Whether Redis answered the last call within `unavailableAfterMs`. While it does not, reads,
   * starts and interactive calls wait for it at most that long (then `BUDGET_UNAVAILABLE`), and aborts
   * wait for it, however long.
   */
  let reachable = true;
  /** Requests that came while Redis was away: each is given up once it has waited `unavailableAfterMs` for it. */
  const giveUps = new Map<number, Subscription>();
  /** Told when the last held abort has gone, while `close()` waits for them. */
  let drained: (() => void) | undefined;
  /**
   * What the service's last count (its `X-RateLimit-Remaining-*` headers, service.md §2.1) leaves for
   * this process to send: the lower of the minute's and the day's, less the requests it let through
   * since (those still on their way then may not be in it). While Redis is away no process of the
   * account is granted anything, so this count is the account's; `close()` spends it on held aborts.
   */
  let serviceLeft: number | undefined;
  /** The account's record as the last call to Redis left it, and when (on the account's clock and on the scheduler). */
  let seen: { record: AccountRecord; at: number; localAt: number } = { record: newAccountRecord(''), at: scheduler.now(), localAt: scheduler.now() };
  const accountNow = (): number => seen.at + Math.max(0, scheduler.now() - seen.localAt);

  /** The head of each class with something waiting, for `chooseNext`. */
  const heads = (): ClassHead[] =>
    FAIR_CLASSES.flatMap((klass) => {
      const line = queue.of(klass);
      const next = line.next();
      const oldest = line.oldest();
      return next === undefined || oldest === undefined ? [] : [{ klass, next, oldest }];
    });

  /** Runs waiting to read, the demand this process declares for its share. */
  const readers = (): number => queue.depths().status + queue.depths().output;

  function wake(delayMs: number): void {
    timer?.unsubscribe();
    timer = scheduler.schedule(() => {
      timer = undefined;
      void ask();
    }, Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(delayMs))));
  }

  /**
   * Asks the account for the request whose turn it is, one call at a time. With nothing waiting, it
   * withdraws this process's reads from the account — and while Redis is away, that call is the one
   * that finds it back.
   */
  async function ask(): Promise<void> {
    if (asking || closed) return;
    const [first, ...rest] = heads();
    if (first === undefined && !declared && reachable) return;
    asking = true;
    changed = false;
    const choice = first === undefined ? undefined : chooseNext([first, ...rest], bypassed, limits.starvationLimit);
    const kind = choice === undefined ? undefined : grantClassOf(choice.chosen.ticket);
    if (kind === 'read') declared = true;
    // The call is not abandoned at its deadline: it stays the one call on its way, and its answer
    // (when Redis is back) is used. Only what cannot wait is told that Redis is away.
    callDeadline = scheduler.schedule(() => {
      // A process that stalled (a busy machine) runs its timers before it reads the answers that came
      // meanwhile: they get one turn to be read before Redis is taken for away.
      callDeadline = scheduler.schedule(unreachable, 0);
    }, unavailableAfterMs);
    let grant: Grant | undefined;
    try {
      grant = choice === undefined || kind === undefined ? await store.leave().then(() => undefined) : await store.grant(kind, readers(), identicalStartKey(choice.chosen.ticket));
    } catch {
      // Redis refused the call (a client that gives up on commands while it is away): asked again soon.
      endCallDeadline();
      asking = false;
      unreachable();
      if (!isClosed()) wake(UNREACHABLE_RETRY_MS);
      return;
    }
    endCallDeadline();
    asking = false;
    reachable = true;
    // Redis answers: what came while it was away waits as any request does.
    for (const giveUp of giveUps.values()) giveUp.unsubscribe();
    giveUps.clear();
    if (isClosed()) return;
    if (choice === undefined || grant === undefined) {
      declared = false;
      void ask();
      return;
    }
    const { chosen } = choice;
    seen = { record: grant.record, at: grant.now, localAt: scheduler.now() };
    const waiter = waiters.get(chosen.id);
    if (grant.verdict === 'wait') {
      // A request that came in meanwhile (an abort, a start) is asked for at once, not after this wait.
      // Another process's answer may free the account before then (a start's identical twin answered,
      // a cap lifted): asked again at least every few seconds.
      if (changedMeanwhile()) void ask();
      else wake(Math.min(grant.at - grant.now, RECHECK_MS));
      return;
    }
    if (grant.verdict === 'refused') {
      remove(chosen.id);
      waiter?.refuse(dayIsSpent(chosen.ticket, grant.at, grant.now));
    } else {
      bypassed = choice.bypassed;
      // Granted: the request goes, if it is still waiting (it may have left while Redis answered; the
      // send it was granted is then counted and unused, never the other way round).
      if (waiter !== undefined) {
        queue.served(chosen);
        remove(chosen.id);
        release(waiter);
      }
    }
    publish();
    void ask();
  }

  function endCallDeadline(): void {
    callDeadline?.unsubscribe();
    callDeadline = undefined;
  }

  /**
   * Redis did not answer in time: fail closed — nothing is sent without its grant, and what cannot
   * wait fails with a typed error rather than hang. Aborts wait for Redis (service.md §3.5: an
   * execution left running spends credits), however long it is away.
   */
  function unreachable(): void {
    reachable = false;
    for (const [id, waiter] of [...waiters]) {
      if (grantClassOf(waiter.ticket) === 'abort') continue;
      remove(id);
      waiter.refuse(unavailableError(unavailableAfterMs));
    }
    publish();
  }

  function release(waiter: Waiter): void {
    inFlight.set(waiter.ticket, scheduler.now());
    if (serviceLeft !== undefined) serviceLeft -= 1;
    waiter.release();
  }

  function remove(id: number): void {
    giveUps.get(id)?.unsubscribe();
    giveUps.delete(id);
    waiters.delete(id);
    queue.remove(id);
    if (waiters.size === 0) drained?.();
  }

  function publish(): void {
    if (observers.size === 0) return;
    const state = snapshot();
    for (const observer of [...observers]) observer.next(state);
  }

  /** The account's state as the in-memory budget shows it (the same function over the same record), with this process's queue. */
  function snapshot(): BudgetState {
    const depths = queue.depths();
    const total = Object.values(depths).reduce((sum, depth) => sum + depth, 0);
    return accountState(seen.record, config, accountNow(), { inFlight: inFlight.size, queued: { total, byPriority: depths }, cadences: {} });
  }

  /** The runs waiting to read here, and the pace the account gives this process's reads (its share, when others read too). */
  function pollHeadroom(): PollHeadroom {
    return { activeRuns: Math.max(1, readers()), readsPerMinute: readsPerMinute(seen.record, accountNow(), config) };
  }

  /**
   * Leaves the account within `unavailableAfterMs`: held aborts get their grant until then; what is
   * still held when Redis is away goes on the service's own count, and each abort not sent is
   * refused and logged with its execution id. Then the connection closes, answered or not.
   */
  async function leaveAccount(): Promise<void> {
    for (const [id, waiter] of [...waiters]) {
      if (grantClassOf(waiter.ticket) === 'abort') continue;
      remove(id);
      waiter.refuse(closedError());
    }
    publish();
    let deadlineTimer: Subscription | undefined;
    const deadline = new Promise<void>((resolve) => {
      deadlineTimer = scheduler.schedule(() => {
        resolve();
      }, unavailableAfterMs);
    });
    if (waiters.size > 0) {
      await Promise.race([deadline, new Promise<void>((resolve) => { drained = resolve; })]);
      drained = undefined;
    }
    closed = true;
    timer?.unsubscribe();
    endCallDeadline();
    for (const [id, waiter] of [...waiters]) {
      remove(id);
      if (!reachable && serviceLeft !== undefined && serviceLeft > 0) {
        release(waiter);
        continue;
      }
      const executionId = waiter.ticket.key;
      logger?.warn('flowstream: the request budget closed before this abort could be sent: the execution may still be running', { executionId, redis: reachable ? 'reachable' : 'unreachable' });
      waiter.refuse(closedError(executionId));
    }
    for (const observer of [...observers]) observer.complete();
    observers.clear();
    if (reachable) await Promise.race([store.leave().catch(() => undefined), deadline]);
    await durations?.close();
    await connection.close(deadline);
    deadlineTimer?.unsubscribe();
  }

  return {
    ...(durations === undefined ? {} : { durations }),
    acquire(ticket: GateTicket, signal?: AbortSignal): Promise<void> {
      if (closing !== undefined && signal?.aborted !== true) return Promise.reject(closedError());
      return waitForTurn(ticket, signal, (waiter) => {
        const id = nextId++;
        waiters.set(id, waiter);
        // Redis is away (it did not answer within `unavailableAfterMs`): what cannot wait for it waits at most that long.
        if (!reachable && grantClassOf(ticket) !== 'abort') {
          giveUps.set(
            id,
            scheduler.schedule(() => {
              remove(id);
              waiter.refuse(unavailableError(unavailableAfterMs));
              publish();
            }, unavailableAfterMs),
          );
        }
        queue.offer(queue.enqueue(id, ticket, scheduler.now()));
        publish();
        // A higher class may have come in while a lower one waits for its time: ask again now.
        changed = true;
        timer?.unsubscribe();
        timer = undefined;
        void ask();
        return () => {
          remove(id);
          publish();
        };
      });
    },
    report(report: GateReport): void {
      const sentAt = inFlight.get(report.ticket);
      inFlight.delete(report.ticket);
      const { rateLimit } = report;
      const counts = [rateLimit.remainingPerMinute, rateLimit.remainingPerDay].filter((count) => count !== undefined);
      if (counts.length > 0) serviceLeft = Math.min(...counts) - inFlight.size;
      void store
        .report({ httpStatus: report.httpStatus, rateLimit, sentAt, inFlight: inFlight.size, startKey: identicalStartKey(report.ticket) })
        .then((record) => {
          seen = { record, at: Math.max(record.at, seen.at), localAt: scheduler.now() };
          publish();
        })
        .catch(() => undefined);
      publish();
    },
    snapshot,
    pollHeadroom,
    state$: new Observable<BudgetState>((subscriber) => {
      subscriber.next(snapshot());
      if (closed) {
        subscriber.complete();
        return undefined;
      }
      observers.add(subscriber);
      return () => observers.delete(subscriber);
    }),
    close(): Promise<void> {
      closing ??= leaveAccount();
      return closing;
    },
  };
}

/** A start the account's day can no longer take (service.md §2.1): refused before it is sent. */
function dayIsSpent(ticket: GateTicket, resetAt: number, now: number): RateLimitError {
  const minutes = Math.max(1, Math.ceil((resetAt - now) / 60_000));
  return new RateLimitError({
    endpoint: ticket.endpoint,
    status: 429,
    errMsg: `the account's requests for the day are spent: the budget refused this start before sending it; the day's window frees a request within ${minutes} min`,
    rateLimit: { remainingPerDay: 0 },
    scope: 'day',
    resetAt,
  });
}

function closedError(executionId?: string): FlowstreamError {
  if (executionId === undefined) return new FlowstreamError('The request budget is closed', 'BUDGET_CLOSED');
  return new FlowstreamError(`The request budget closed before the abort of ${executionId} could be sent: the execution may still be running`, 'BUDGET_CLOSED');
}

function unavailableError(afterMs: number): FlowstreamError {
  return new FlowstreamError(`Redis did not answer the request budget within ${afterMs} ms: nothing was sent`, 'BUDGET_UNAVAILABLE');
}
