import { asyncScheduler, Observable } from 'rxjs';
import type { Subscriber, Subscription } from 'rxjs';
import type { AccountBudget, BudgetState } from '../domain/budget.js';
import type { AccountBudgetOptions, RequestBudgetOptions } from '../domain/options.js';
import type { GateReport, GateTicket } from '../domain/requests.js';
import { RateLimitError } from '../errors/api-errors.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { MAX_TIMER_MS } from '../http/options.js';
import { type Waiter, waitForTurn } from './waiting-request.js';
import { budgetState } from './budget-state.js';
import type { MemoryLedger } from './ledger.js';
import { BudgetCore } from './scheduler.js';
import type { Refusal, SchedulerEvent } from './scheduler.js';

export type { AccountBudget, AccountBudgetOptions };

/**
 * Creates an account budget in memory: the scheduler
 * (`BudgetCore`) behind a thin shell that keeps the waiting promises and at most one timer, and only
 * while requests wait. Every client given it shares it — one count per window for the account,
 * priorities and fairness across all their runs. A client made without one creates its own.
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
  const { scheduler = asyncScheduler, durations, ledger, ...numbers } = options;
  // The budget's clock. Real time is the wall clock, which may step back (NTP): the budget's time never does.
  let latest = Number.NEGATIVE_INFINITY;
  const now = (): number => {
    latest = Math.max(latest, scheduler.now());
    return latest;
  };
  // The account's record and rules live behind the ledger; the queue, the waiters and the timer here.
  const core = new BudgetCore(numbers, ledger);
  const waiters = new Map<number, Waiter>();
  const observers = new Set<Subscriber<BudgetState>>();
  let nextId = 0;
  let timer: { readonly handle: Subscription; readonly at: number } | undefined;
  let closed = false;
  let publishing = false;
  let changes = 0;
  let published = 0;

  function dispatch(event: SchedulerEvent): void {
    const at = now();
    const result = core.step(event, at);
    for (const id of result.released) {
      const waiter = waiters.get(id);
      waiters.delete(id);
      waiter?.release();
    }
    for (const refusal of result.refused) {
      const waiter = waiters.get(refusal.id);
      waiters.delete(refusal.id);
      if (waiter !== undefined) waiter.refuse(dayIsSpent(waiter.ticket, refusal, at));
    }
    schedule(result.wakeAt, at);
    publish();
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
      if (closed) return Promise.reject(closedError());
      return waitForTurn(ticket, signal, (waiter) => {
        const id = nextId++;
        waiters.set(id, waiter);
        dispatch({ type: 'enqueue', id, ticket });
        return () => {
          waiters.delete(id);
          dispatch({ type: 'cancel', id });
        };
      });
    },
    report(report: GateReport): void {
      dispatch({ type: 'report', report });
    },
    snapshot: () => budgetState(core, now()),
    pollHeadroom: () => core.headroom(now()),
    ...(durations === undefined ? {} : { durations }),
    state$,
    close(): Promise<void> {
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

function closedError(): FlowstreamError {
  return new FlowstreamError('The request budget is closed', 'BUDGET_CLOSED');
}
