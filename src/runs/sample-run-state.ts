import { asyncScheduler, type MonoTypeOperatorFunction, Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { timerDelay } from '../http/options.js';
import type { RunState } from './run-state.js';

/**
 * Thins a run's states for a display refreshed on a timer: the first state at once, then at most one
 * every `periodMs` — the latest, at the end of each period — and the final state always, at once: a
 * state with its `result` is delivered as it comes, and so is the first that says `cancelling`, and whatever is held back when the run completes
 * or errors is delivered before that. Timers run on `scheduler` (the client's, in tests a
 * `TestScheduler`).
 *
 * @example
 * ```ts
 * client.run('c-1').pipe(toRunState(), sampleRunState(5_000)).subscribe(updateCard);
 * ```
 */
export function sampleRunState(periodMs: number, scheduler: SchedulerLike = asyncScheduler): MonoTypeOperatorFunction<RunState> {
  timerDelay('sampleMs', periodMs);
  return (source) =>
    new Observable<RunState>((subscriber) => {
      let held: RunState | undefined;
      let period: Subscription | undefined;
      let cancelling = false;

      const deliver = (state: RunState): void => {
        held = undefined;
        cancelling = state.cancelling === true;
        period?.unsubscribe();
        period = scheduler.schedule(endPeriod, periodMs);
        subscriber.next(state);
      };
      function endPeriod(): void {
        period = undefined;
        if (held !== undefined) deliver(held);
      }
      const deliverHeld = (): void => {
        period?.unsubscribe();
        period = undefined;
        if (held !== undefined) subscriber.next(held);
        held = undefined;
      };

      const subscription = source.subscribe({
        next: (state) => {
          // The end, and a cancel starting, show at once.
          if (period === undefined || state.result !== undefined || (state.cancelling === true && !cancelling)) deliver(state);
          else held = state;
        },
        error: (error: unknown) => {
          deliverHeld();
          subscriber.error(error);
        },
        complete: () => {
          deliverHeld();
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        period?.unsubscribe();
      };
    });
}
