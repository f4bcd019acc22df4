/**
 * The request budget's public vocabulary: the account budget every client's requests pass through, and
 * the state it shows. It lives at the bottom floor because the client's options name it
 * (`ClientOptions.budget`); `src/budget/` implements it in memory, `flowstream/redis` across processes.
 */
import type { Observable } from 'rxjs';
import type { DurationModel } from './durations.js';
import type { RequestPriority } from './endpoints.js';
import type { GateReport, GateTicket, RequestGate } from './requests.js';

/**
 * The budget of one account (service.md §2.1: 100 requests a minute and 10,000 a day, whoever sends
 * them): the pacer, the day's bucket and reserve, the caps read off the service's headers, the pause
 * after a 429 and the marks that space identical starts. Give one to several clients
 * (`createClient({ budget })`) and they share it: one count per window, priorities and fairness across
 * all their runs. `createAccountBudget()` keeps it in memory; `createRedisBudget()` (`flowstream/redis`)
 * shares it between processes.
 *
 * Its steps, as an implementation over a shared store takes them: `acquire` joins a request to the
 * account's demand and resolves when it is granted a send (a start the day can no longer take is
 * refused at once with `RateLimitError`, `scope: 'day'`); aborting the signal makes a waiting request
 * leave (its demand withdrawn at once, the promise rejected with the signal's reason); `report` tells
 * the account what the answer said; `close` makes this handle leave the account for good.
 *
 * @example
 * ```ts
 * const budget = createAccountBudget({ requestsPerMinute: 100 });
 * const reports = createClient({ apiKey, baseUrl, budget });
 * const imports = createClient({ apiKey, baseUrl, budget });
 * budget.state$.subscribe((state) => console.log(`${state.usedThisMinute} this minute, ${state.day.remaining} left today`));
 * // …
 * await budget.close();
 * ```
 */
export interface AccountBudget extends RequestGate {
  /**
   * Resolves when the request may be sent (the grant). Rejects with `signal.reason` when the signal
   * aborts while it waits (it leaves the queue at once), with `RateLimitError` (`scope: 'day'`,
   * `resetAt`) for a start when the day is spent, and with a `FlowstreamError` coded `BUDGET_CLOSED`
   * once the budget is closed.
   */
  acquire(ticket: GateTicket, signal?: AbortSignal): Promise<void>;
  /** Called once for every attempt that `acquire` let through, when its answer (or failure) is known. */
  report(report: GateReport): void;
  /** The state now. */
  snapshot(): BudgetState;
  /** The state on subscription and after every change (a request queued, let through, dropped or answered). */
  readonly state$: Observable<BudgetState>;
  /**
   * Registers what a run needs of its next read, before the read asks (`key`: the execution id):
   * the budget holds that read until its time and then grants, whenever the account can send a read,
   * the one worth most — fairly by run. Returns how to withdraw the need. Optional: a budget without
   * it grants each read when it asks, and the run times its own reads by the same rule.
   */
  needRead?(key: string, need: ReadNeed): () => void;
  /**
   * The account's learned node durations, used by every client given this budget that has
   * no model of its own; across processes with `flowstream/redis`.
   */
  readonly durations?: DurationModel;
  /**
   * Leaves the account: every request still waiting is rejected (`BUDGET_CLOSED`), no timer is left,
   * later `acquire`s are refused. Answers of requests already sent are still counted.
   */
  close(): Promise<void>;
}

/**
 * What a run needs of its next read (`AccountBudget.needRead`): its bounds, counted from its last read,
 * and how likely a change is over time. Times in ms on the budget's clock.
 *
 * @example
 * ```ts
 * const need: ReadNeed = { since: 12_000, minMs: 500, wishMs: 3_375, maxMs: 10_000 };
 * ```
 */
export interface ReadNeed {
  /** When the run's last read answered. */
  readonly since: number;
  /** Not before `since + minMs`. */
  readonly minMs: number;
  /** The run's own wish: its cadence's back-off, or where its learned durations put the read. */
  readonly wishMs: number;
  /** Its maximum gap: while the account can give it, the read goes by `since + maxMs`. */
  readonly maxMs: number;
  /**
   * When the change the run waits for has become likely, from its learned durations; absent, a
   * change is as likely at any time (a flat model). On a tight budget the likelier reads go first.
   */
  readonly likelyAt?: number;
  /**
   * With `likelyAt`: where the run's learned durations put its read when the account gives it one
   * read per `shareMs` (less than its `maxMs`): the wait after `since` and the moment the change has
   * become likely, for that share (`likelyAt`: the need's `likelyAt` re-timed for that share).
   */
  readonly atShare?: (shareMs: number) => { readonly waitMs: number; readonly likelyAt: number };
  /** The read can only find a change certain within a tick of the service (the run's end, a child's start): it goes at once. */
  readonly certain?: boolean;
}

/**
 * What the budget looks like at one moment, for UIs and logs. Plain data (JSON-serialisable): times
 * are in ms on the budget's clock (`Date.now()` by default, emulator time on `emulator.scheduler`).
 *
 * @example
 * ```ts
 * budget.state$.subscribe((s) => console.log(`${s.usedThisMinute}/${s.limitPerMinute}, ${s.queued.total} waiting`));
 * ```
 */
export interface BudgetState {
  /** When the snapshot was taken. */
  readonly at: number;
  /** The limits in force: the configured ones, or the service's own when its headers name lower ones. */
  readonly limitPerMinute: number;
  readonly limitPerDay: number;
  /** Our requests in the last 60 s (the service's window length, service.md §2.1). */
  readonly usedThisMinute: number;
  /** What the limit leaves of it, by our count. */
  readonly remainingThisMinute: number;
  /** Our requests in the last 24 h. */
  readonly usedToday: number;
  readonly remainingToday: number;
  /** The day as the budget paces it. */
  readonly day: DayView;
  /** The service's own count, from the last answer's headers (it includes other processes on the account). */
  readonly server: ServerView;
  /** Requests let through whose answer has not come yet. */
  readonly inFlight: number;
  readonly queued: { readonly total: number; readonly byPriority: Readonly<Record<RequestPriority, number>> };
  /** Set while a 429 holds everything back. */
  readonly pausedUntil?: number;
  /** True while the service's headers show someone else using the account and we slow down for it. */
  readonly followingServer: boolean;
  /** When the budget lets the next poll or interactive call go; equal to `at` when one may go now. */
  readonly nextSendAt: number;
  /** Per key (execution id): the polls the budget actually let through. */
  readonly cadences: Readonly<Record<string, KeyCadence>>;
}

/**
 * The day as the budget spends it: what is used and left, the part kept for aborts and starts, what
 * may still go at full speed, the pace the day sustains and, at the pace of the last hour, when the
 * full speed would end.
 *
 * @example
 * ```ts
 * const { remaining, reserve, burst, sustainablePerMinute, exhaustedAt } = budget.snapshot().day;
 * ```
 */
export interface DayView {
  /** Our requests in the service's day window (the last 24 h). */
  readonly used: number;
  /** What is left of the day, reserve included: by our count, or the service's when it says less. */
  readonly remaining: number;
  /** Kept for aborts and starts: polls and interactive calls never take it. */
  readonly reserve: number;
  /**
   * Requests that polls and interactive calls may still spend at the minute's pace before the day
   * paces them: the day's bucket, full after a quiet spell (a tenth of the usable day by default).
   */
  readonly burst: number;
  /**
   * Requests per minute the day sustains for polls and interactive calls from now on: what is left of
   * the usable day over the time until the day window gives enough back (remaining ÷ time to reset),
   * about 6.6 when the day is used evenly; lower when the service's count (another process on the
   * account) leaves less, spread until its day can have reset. It is the day's bucket's refill.
   */
  readonly sustainablePerMinute: number;
  /**
   * At the pace of the last hour, when the bucket would be empty and polls down to the sustainable
   * pace; absent when the refill keeps up with that pace.
   */
  readonly exhaustedAt?: number;
}

/**
 * A run's polling as the budget lets it happen: the run layer shows it and adapts to it (no point
 * asking every 200 ms when the budget grants one poll every 4 s). Counted on status polls in the runs'
 * turns only: they are a run's cadence, while outputs follow them, starts and aborts are one-offs, and
 * a read certain to find a change (the run's end) goes outside the turns.
 *
 * @example
 * ```ts
 * const cadence: KeyCadence = { lastSentAt: 5_000, intervalMs: 2_000, waitMs: 150 };
 * ```
 */
export interface KeyCadence {
  readonly lastSentAt: number;
  /** Time between the last two polls sent; absent after the first. */
  readonly intervalMs?: number;
  /** How long the last poll waited for the budget. */
  readonly waitMs: number;
}

/**
 * The service's last word on the account's remaining requests (service.md §2.1).
 *
 * @example
 * ```ts
 * const view: ServerView = { remainingPerMinute: 42, remainingPerDay: 9_000, at: 12_000 };
 * ```
 */
export interface ServerView {
  readonly remainingPerMinute?: number;
  readonly remainingPerDay?: number;
  /** When it said so. */
  readonly at?: number;
}
