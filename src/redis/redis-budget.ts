import { randomUUID } from 'node:crypto';
import { asyncScheduler, Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { budgetLimits, type BudgetLimits } from '../budget/limits.js';
import { type Waiter, waitForTurn } from '../budget/waiting-request.js';
import { chooseNext, type ClassHead, FAIR_CLASSES, FairQueue, fairClassOf } from '../budget/fair-queue.js';
import type { AccountBudget, BudgetState } from '../domain/budget.js';
import type { RequestBudgetOptions } from '../domain/options.js';
import type { GateReport, GateTicket } from '../domain/requests.js';
import { RateLimitError } from '../errors/api-errors.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { DEFAULTS } from '../domain/options.js';
import { MAX_TIMER_MS, positive, timerDelay } from '../http/options.js';
import { checkAccountName } from './account-name.js';
import { type GrantClass, RedisAccountStore } from './account-store.js';
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
   * Redis time × this factor is the account's clock: 20 for clients on an emulator 20× faster than
   * real time (tests, benchmarks). Default 1.
   */
  readonly timeScale?: number;
  /** The client's scheduler (its timers wait for the grants). Default real time. */
  readonly scheduler?: SchedulerLike;
  /**
   * How long requests wait for an unreachable Redis (ms on the scheduler) before they fail with a
   * `FlowstreamError` coded `BUDGET_UNAVAILABLE`; nothing is sent meanwhile. Default 30 s, a request's
   * own default timeout.
   */
  readonly unavailableAfterMs?: number;
  /**
   * The account's learned node durations, shared by the fleet through Redis as
   * `budget.durations` (see {@link createRedisDurations}), with the model's bounds or these; `false`
   * for none (each client then learns on its own). Default `true`.
   */
  readonly durations?: boolean | Pick<RedisDurationsOptions, 'window' | 'maxNodes' | 'minSamples' | 'logger'>;
}

/**
 * The account budget of a fleet, in Redis: with `close()` to leave the account, and the account's
 * learned durations, which `close()` closes too.
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
 * many runs it has waiting. It fails closed: while Redis is unreachable nothing is sent, requests wait
 * (their callers' deadlines end them), and nothing bursts afterwards. Its `durations` are the
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
  const timeScale = positive('timeScale', options.timeScale ?? 1);
  const unavailableAfterMs = timerDelay('unavailableAfterMs', options.unavailableAfterMs ?? DEFAULTS.timeoutMs);
  const scheduler = options.scheduler ?? asyncScheduler;
  const limits: BudgetLimits = budgetLimits(options);
  const connection = connectRedis(options.redis);
  let durations: RedisDurations | undefined;
  try {
    const shared = options.durations ?? true;
    durations = shared === false ? undefined : createRedisDurations({ redis: connection.client, account, scheduler, unavailableAfterMs, ...(shared === true ? {} : shared) });
  } catch (error) {
    // Bounds that are not: nothing is left connected.
    void connection.close();
    throw error;
  }
  const store = new RedisAccountStore(connection.client, {
    account,
    process: randomUUID(),
    limits,
    timeScale,
    leaseMs: LEASE_WINDOWS * limits.minuteWindowMs,
  });

  const queue = new FairQueue();
  const waiters = new Map<number, Waiter>();
  const inFlight = new Map<GateTicket, number>();
  const observers = new Set<Subscriber<BudgetState>>();
  let nextId = 0;
  let bypassed = 0;
  let asking = false;
  /** Something came in while a grant was being asked: the answer may be for a request no longer first. */
  let changed = false;
  // Read through a function: TypeScript does not see the assignment made by acquire() during the await.
  const changedMeanwhile = (): boolean => changed;
  let timer: Subscription | undefined;
  let closed = false;
  let declared = false;
  /** Whether Redis answered the last grant in time: leaving an unreachable account waits for nothing. */
  let reachable = true;
  let seen = { inMinute: 0, inDay: 0, at: scheduler.now(), nextSendAt: scheduler.now(), pausedUntil: undefined as number | undefined };

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

  /** Asks the account for the request whose turn it is, one at a time. */
  async function ask(): Promise<void> {
    if (asking || closed) return;
    const [first, ...rest] = heads();
    if (first === undefined) {
      if (declared) {
        declared = false;
        await store.leave().catch(() => undefined);
      }
      return;
    }
    asking = true;
    changed = false;
    const { chosen, bypassed: overtaken } = chooseNext([first, ...rest], bypassed, limits.starvationLimit);
    try {
      const kind = grantClassOf(chosen.ticket);
      if (kind === 'read') declared = true;
      const grant = await withinDeadline(store.grant(kind, readers(), kind === 'start' ? chosen.ticket.key : undefined), unavailableAfterMs, scheduler);
      reachable = true;
      seen = { ...seen, inMinute: grant.inMinute, inDay: grant.inDay, at: grant.now, nextSendAt: grant.verdict === 'wait' ? grant.at : grant.now };
      asking = false;
      const waiter = waiters.get(chosen.id);
      if (grant.verdict === 'wait') {
        // A request that came in meanwhile (an abort, a start) is asked for at once, not after this wait.
        if (changedMeanwhile()) void ask();
        else wake(grant.at - grant.now);
        return;
      }
      if (grant.verdict === 'refused') {
        remove(chosen.id);
        waiter?.refuse(dayIsSpent(chosen.ticket, grant.at, grant.now));
      } else {
        bypassed = overtaken;
        // Granted: the request goes, if it is still waiting (it may have left while Redis answered; the
        // send it was granted is then counted and unused, never the other way round).
        if (waiter !== undefined) {
          queue.served(chosen);
          remove(chosen.id);
          inFlight.set(chosen.ticket, grant.now);
          waiter.release();
        }
      }
      publish();
      void ask();
    } catch {
      // Redis unreachable: fail closed — nothing is sent until it answers again, and what waited
      // longer than it may fails with a typed error rather than hang.
      asking = false;
      reachable = false;
      for (const [id, waiter] of [...waiters]) {
        remove(id);
        waiter.refuse(new FlowstreamError(`Redis did not answer the request budget within ${unavailableAfterMs} ms: nothing was sent`, 'BUDGET_UNAVAILABLE'));
      }
      publish();
      wake(UNREACHABLE_RETRY_MS);
    }
  }

  function remove(id: number): void {
    waiters.delete(id);
    queue.remove(id);
  }

  function publish(): void {
    if (observers.size === 0) return;
    const state = snapshot();
    for (const observer of [...observers]) observer.next(state);
  }

  function snapshot(): BudgetState {
    const depths = queue.depths();
    const total = Object.values(depths).reduce((sum, depth) => sum + depth, 0);
    return {
      at: seen.at,
      limitPerMinute: limits.perMinute,
      limitPerDay: limits.perDay,
      usedThisMinute: seen.inMinute,
      remainingThisMinute: Math.max(0, limits.perMinute - seen.inMinute),
      usedToday: seen.inDay,
      remainingToday: Math.max(0, limits.perDay - seen.inDay),
      day: {
        used: seen.inDay,
        remaining: Math.max(0, limits.perDay - seen.inDay),
        reserve: limits.dayReserve,
        burst: limits.dayBurst,
        sustainablePerMinute: (Math.max(0, limits.usablePerDay - seen.inDay) / limits.dayWindowMs) * 60_000,
      },
      server: {},
      inFlight: inFlight.size,
      queued: { total, byPriority: depths },
      followingServer: false,
      nextSendAt: seen.nextSendAt,
      cadences: {},
    };
  }

  return {
    ...(durations === undefined ? {} : { durations }),
    acquire(ticket: GateTicket, signal?: AbortSignal): Promise<void> {
      if (closed && signal?.aborted !== true) return Promise.reject(closedError());
      return waitForTurn(ticket, signal, (waiter) => {
        const id = nextId++;
        waiters.set(id, waiter);
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
      inFlight.delete(report.ticket);
      const { rateLimit } = report;
      void store
        .report({
          httpStatus: report.httpStatus,
          remainingPerMinute: rateLimit.remainingPerMinute,
          remainingPerDay: rateLimit.remainingPerDay,
          limitPerMinute: rateLimit.limitPerMinute !== undefined && rateLimit.limitPerMinute < limits.perMinute ? rateLimit.limitPerMinute : undefined,
          limitPerDay: rateLimit.limitPerDay !== undefined && rateLimit.limitPerDay < limits.perDay ? rateLimit.limitPerDay : undefined,
          startKey: grantClassOf(report.ticket) === 'start' ? report.ticket.key : undefined,
        })
        .catch(() => undefined);
      publish();
    },
    snapshot,
    state$: new Observable<BudgetState>((subscriber) => {
      subscriber.next(snapshot());
      if (closed) {
        subscriber.complete();
        return undefined;
      }
      observers.add(subscriber);
      return () => observers.delete(subscriber);
    }),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      timer?.unsubscribe();
      for (const [id, waiter] of [...waiters]) {
        remove(id);
        waiter.refuse(closedError());
      }
      for (const observer of [...observers]) observer.complete();
      observers.clear();
      if (reachable) await store.leave().catch(() => undefined);
      await durations?.close();
      await connection.close();
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

function closedError(): FlowstreamError {
  return new FlowstreamError('The request budget is closed', 'BUDGET_CLOSED');
}

/** `promise`, or a rejection once `ms` have passed on `scheduler` without its answer. */
function withinDeadline<T>(promise: Promise<T>, ms: number, scheduler: SchedulerLike): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = scheduler.schedule(() => {
      reject(new Error('deadline'));
    }, ms);
    promise.then(
      (value) => {
        timer.unsubscribe();
        resolve(value);
      },
      (error: unknown) => {
        timer.unsubscribe();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
