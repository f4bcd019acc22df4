import { asapScheduler, asyncScheduler, type MonoTypeOperatorFunction, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { timerDelay } from '../http/options.js';
import type { RunEvent } from './events.js';
import { readingOf, RunReader, type RunReading, type RunState } from './run-state.js';

/**
 * Options of {@link toRunState}.
 *
 * @example
 * ```ts
 * const options: RunStateOptions = { sampleMs: 5_000, scheduler: testScheduler };
 * ```
 */
export interface RunStateOptions {
  /**
   * Drives the sampling, and for events that are not a run of this client the end of a read's batch
   * and the times. Default `asapScheduler`: such a read's state is emitted as soon as its events have
   * all arrived.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Emit at most one state per period, for a display refreshed on a timer; the final state always
   * arrives, at once (see {@link sampleRunState}). Default: every poll's state.
   */
  readonly sampleMs?: number;
}

/**
 * A run's events as the states a UI shows — one state per read of the execution: nodes with status,
 * title, text and elapsed time in order, files, progress over task nodes (`succeeded`, `failed`,
 * `total`), the run's elapsed time, status, and the result once finished.
 *
 * A run of this client carries its state with its events: each read's state is emitted with the
 * read's last event, exactly as the run built it, so no state shows half a read (never `finish` while
 * a node still reads `executing`, never 100 % while the first task runs) and every subscriber of a
 * shared run sees the same states. Any other stream of `RunEvent`s is folded: events that arrive
 * together, synchronously, are one read, whose state is emitted once that batch is over (on
 * `scheduler`, at once when the stream completes or errors). A `snapshot` event stands for every
 * event before it.
 *
 * @example
 * ```ts
 * client.run('c-1').pipe(toRunState({ sampleMs: 5_000 })).subscribe((state) => {
 *   render(`${state.progress.succeeded}/${state.progress.total}`, state.nodes);
 * });
 * ```
 */
export function toRunState(options: RunStateOptions = {}): OperatorFunction<RunEvent, RunState> {
  const scheduler = options.scheduler ?? asapScheduler;
  const sample = options.sampleMs === undefined ? undefined : sampleRunState(options.sampleMs, scheduler);
  return (source) => {
    const states = statesOf(source, scheduler);
    return sample === undefined ? states : states.pipe(sample);
  };
}

function statesOf(source: Observable<RunEvent>, scheduler: SchedulerLike): Observable<RunState> {
  return new Observable<RunState>((subscriber) => {
    const reader = new RunReader(scheduler);
    // Events of another stream, to fold once their batch is over.
    let batch: RunEvent[] = [];
    // The run's reading whose events are arriving: its state goes out with its last event, or at the
    // end of the batch when that one was filtered out before this operator.
    let reading: RunReading | undefined;
    // The state of the run's last reading, which the events of another stream after it build on.
    let adopted: RunState | undefined;
    let batchEnd: Subscription | undefined;

    const emit = (): void => {
      batchEnd?.unsubscribe();
      batchEnd = undefined;
      if (reading !== undefined) {
        adopted = reading.state;
        reading = undefined;
        subscriber.next(adopted);
        return;
      }
      if (batch.length === 0) return;
      const events = adopted === undefined ? batch : [{ type: 'snapshot' as const, executionId: adopted.executionId ?? '', state: adopted }, ...batch];
      batch = [];
      adopted = undefined;
      subscriber.next(reader.read(events).state);
    };

    const subscription = source.subscribe({
      next: (event) => {
        const own = readingOf(event);
        if (own === undefined) {
          if (reading !== undefined) emit();
          batch.push(event);
        } else {
          if (batch.length > 0 || (reading !== undefined && reading !== own)) emit();
          reading = own;
          if (event === own.events.at(-1)) {
            emit();
            return;
          }
        }
        batchEnd ??= scheduler.schedule(emit);
      },
      error: (error: unknown) => {
        emit();
        subscriber.error(error);
      },
      complete: () => {
        emit();
        subscriber.complete();
      },
    });
    return () => {
      subscription.unsubscribe();
      batchEnd?.unsubscribe();
    };
  });
}

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
