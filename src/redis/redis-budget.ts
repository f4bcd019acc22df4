import { randomUUID } from 'node:crypto';
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { createSharedAccountBudget } from '../budget/account-budget.js';
import { shareAccount } from '../budget/shared-account.js';
import type { AccountConfig } from '../budget/account-rules.js';
import { budgetLimits } from '../budget/account-rules.js';
import { SharedProcess } from '../budget/process-rules.js';
import type { AccountBudget } from '../domain/budget.js';
import type { Logger } from '../domain/model.js';
import type { RequestBudgetOptions } from '../domain/options.js';
import { DEFAULTS } from '../domain/options.js';
import { knownKeys, positive, requiredOptions, schedulerArgument, timerDelay } from '../errors/validation-errors.js';
import { safeLogger } from '../http/safe-logger.js';
import { checkAccountName } from './account-name.js';
import { RedisAccountStore } from './account-store.js';
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
   * Redis allows. Default 1 on real time (no `scheduler`, or one of RxJS's real-time schedulers
   * such as `asyncScheduler`), unchecked with any other `scheduler` (a virtual clock need not follow Redis's).
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

/** The names `createRedisBudget` takes. */
const REDIS_BUDGET_OPTION_NAMES: readonly (keyof RedisBudgetOptions)[] = [
  'redis',
  'account',
  'requestsPerMinute',
  'requestsPerDay',
  'safetyMargin',
  'latencyAllowanceMs',
  'timeScale',
  'scheduler',
  'unavailableAfterMs',
  'durations',
  'logger',
];

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

/**
 * Whether `scheduler` keeps real time: none given, or one of RxJS's own (`asyncScheduler`, `asapScheduler`,
 * `queueScheduler`: their clock is the host's). A client's real-time scheduler passed on must not turn off
 * the guard against a host clock that steps ahead.
 */
function onRealTime(scheduler: SchedulerLike | undefined): boolean {
  return scheduler === undefined || scheduler.now === asyncScheduler.now;
}

/** How long a process's demand counts without news from it: a process killed with -9 is forgotten after this. */
const LEASE_WINDOWS = 2;
/**
 * One account budget for every process of a fleet: the in-memory budget's queue, priorities and rules,
 * with the account kept in Redis. Each process keeps its own queue — priorities, runs in turn — and
 * asks the account in Redis whether each request may go now: at most the usable count in any window of
 * the service; the day paced with its reserve; the service's caps and a 429's pause shared; identical
 * starts spaced account-wide; each process's share of the reads following how many runs it has waiting. It fails closed: while Redis is unreachable nothing is sent and nothing
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
  requiredOptions(options, 'must be an object with redis and account');
  // A misspelt name (`requestPerMinute`) would leave the account's limit at its default, unsaid.
  knownKeys('options', options, REDIS_BUDGET_OPTION_NAMES);
  const account = checkAccountName(options.account);
  const unavailableAfterMs = timerDelay('unavailableAfterMs', options.unavailableAfterMs ?? DEFAULTS.timeoutMs);
  const given = schedulerArgument('scheduler', options.scheduler);
  const scheduler = given ?? asyncScheduler;
  const timeScale = options.timeScale === undefined ? (onRealTime(given) ? 1 : undefined) : positive('timeScale', options.timeScale);
  const logger = safeLogger(options.logger);
  const limits = budgetLimits(options);
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
    process: new SharedProcess(randomUUID(), LEASE_WINDOWS * limits.minuteWindowMs),
  };
  const store = new RedisAccountStore(connection.client, {
    account,
    config,
    clock: () => scheduler.now(),
    timeScale,
    onClockStep: (aheadMs) => logger?.warn('flowstream: this process\'s clock is ahead of the account\'s by more than Redis\'s time allows: the account keeps to Redis\'s', { aheadMs: Math.round(aheadMs) }),
  });
  // The one shell of every account budget, with the account kept in Redis.
  const budget = createSharedAccountBudget(
    { ...config.options, scheduler },
    shareAccount({
      config,
      unavailableAfterMs,
      logger,
      request: (klass, demand, startKey) => store.grant(klass === 'reads' ? 'read' : klass, demand, startKey),
      report: (answer) => store.report(answer),
      leave: () => store.leave(),
      markKey: (startKey) => store.markKey(startKey),
    }),
  );
  let closing: Promise<void> | undefined;

  /** Leaves the account within `unavailableAfterMs` (see `RedisBudget`), then closes the durations and the connection, answered or not. */
  async function close(): Promise<void> {
    let deadlineTimer: Subscription | undefined;
    const deadline = new Promise<void>((resolve) => {
      deadlineTimer = scheduler.schedule(() => {
        resolve();
      }, unavailableAfterMs);
    });
    await budget.close();
    await durations?.close();
    await connection.close(deadline);
    deadlineTimer?.unsubscribe();
  }

  return {
    acquire: (ticket, signal) => budget.acquire(ticket, signal),
    ...(budget.wait === undefined ? {} : { wait: budget.wait.bind(budget) }),
    report: (report) => {
      budget.report(report);
    },
    snapshot: () => budget.snapshot(),
    // The budget times every run's read, on the shared account as in memory.
    needRead: (key, need) => budget.needRead?.(key, need) ?? (() => undefined),
    state$: budget.state$,
    ...(durations === undefined ? {} : { durations }),
    close(): Promise<void> {
      closing ??= close();
      return closing;
    },
  };
}
