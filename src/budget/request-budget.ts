import { asyncScheduler, BehaviorSubject } from 'rxjs';
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import type { GateReport, GateTicket, RequestGate } from '../domain/requests.js';
import { MAX_TIMER_MS } from '../http/options.js';
import { budgetState } from './budget-state.js';
import type { BudgetState } from './budget-state.js';
import { budgetLimits } from './limits.js';
import type { RequestBudgetOptions } from './limits.js';
import { step } from './scheduler.js';
import type { SchedulerEvent } from './scheduler.js';
import { initialSchedulerState } from './scheduler-state.js';

/**
 * A client's request budget: the `RequestGate` every attempt passes through, plus its state for UIs
 * and logs.
 *
 * @example
 * ```ts
 * const budget = createRequestBudget();
 * await budget.acquire({ endpoint: 'status', priority: 'status', key: executionId }, signal);
 * budget.report({ ticket, httpStatus: 200, rateLimit: { remainingPerMinute: 80 } });
 * ```
 */
export interface RequestBudget extends RequestGate {
  /** The state now. */
  snapshot(): BudgetState;
  /** The state after every change (a request queued, let through, dropped or answered); replays the latest. */
  readonly state$: Observable<BudgetState>;
}

interface Waiter {
  readonly release: () => void;
}

/**
 * Creates the request budget a client owns (DESIGN.md, "Polling and the request budget"): the pure
 * scheduler (`step`) behind a thin shell that keeps the waiting promises and at most one timer, and
 * only while requests wait. Its time and timer are the client's `scheduler`. With `budget: false` the client creates none and sends at once.
 *
 * @example
 * ```ts
 * const budget = options.budget === false ? undefined : createRequestBudget(options.budget ?? {});
 * const http = createHttpClient({ ...options, ...(budget === undefined ? {} : { gate: budget }) });
 * budget?.state$.subscribe((state) => logger.debug?.('budget', { ...state }));
 * ```
 */
export function createRequestBudget(options: RequestBudgetOptions = {}, scheduler: SchedulerLike = asyncScheduler): RequestBudget {
  // The client's clock. Real time is the wall clock, which may step back (NTP): the budget's time never does.
  let latest = Number.NEGATIVE_INFINITY;
  const clock = {
    now: (): number => {
      latest = Math.max(latest, scheduler.now());
      return latest;
    },
  };
  let state = initialSchedulerState(budgetLimits(options));
  const waiters = new Map<number, Waiter>();
  let nextId = 0;
  let timer: { readonly handle: Subscription; readonly at: number } | undefined;
  const states = new BehaviorSubject<BudgetState>(budgetState(state, clock.now()));
  let publishing = false;
  let changes = 0;
  let published = 0;

  function dispatch(event: SchedulerEvent): void {
    const now = clock.now();
    const result = step(state, event, now);
    state = result.state;
    for (const id of result.released) {
      const waiter = waiters.get(id);
      waiters.delete(id);
      waiter?.release();
    }
    schedule(result.wakeAt, now);
    publish();
  }

  function schedule(wakeAt: number | undefined, now: number): void {
    if (timer !== undefined && timer.at === wakeAt) return;
    timer?.handle.unsubscribe();
    timer = undefined;
    if (wakeAt === undefined) return;
    // A timer keeps at most 2^31 − 1 ms; a longer one fires at once (and would spin). Waking early
    // only steps the scheduler again, which sets the next timer.
    const handle = scheduler.schedule(() => {
      timer = undefined;
      dispatch({ type: 'wake' });
    }, Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(wakeAt - now))));
    timer = { handle, at: wakeAt };
  }

  // A subscriber may acquire or report while we publish: rather than publish from inside the
  // publication (subscribers after it would then see the newer state first, the older one last), the
  // outer loop publishes again once the current round is over, so every subscriber sees states in order.
  function publish(): void {
    changes += 1;
    if (publishing) return;
    publishing = true;
    try {
      while (published !== changes) {
        published = changes;
        states.next(budgetState(state, clock.now()));
      }
    } finally {
      publishing = false;
    }
  }

  return {
    acquire(ticket: GateTicket, signal?: AbortSignal): Promise<void> {
      if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
      return new Promise<void>((resolve, reject) => {
        const id = nextId++;
        const onAbort = (): void => {
          waiters.delete(id);
          reject(signal?.reason as Error);
          dispatch({ type: 'cancel', id });
        };
        waiters.set(id, {
          release: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        });
        signal?.addEventListener('abort', onAbort, { once: true });
        dispatch({ type: 'enqueue', id, ticket });
      });
    },
    report(report: GateReport): void {
      dispatch({ type: 'report', report });
    },
    snapshot: () => budgetState(state, clock.now()),
    state$: states.asObservable(),
  };
}
