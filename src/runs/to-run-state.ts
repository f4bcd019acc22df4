import { asapScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { RunEvent } from './events.js';
import { type NodeTimes, observeTimes, withElapsed } from './node-timing.js';
import { type RunState, RunStateFold } from './run-state.js';
import { sampleRunState } from './sample-run-state.js';

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
   * Drives the end of a poll's batch, the times and the sampling. Default `asapScheduler`: a poll's
   * state is emitted as soon as its events have all arrived.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Emit at most one state per period, for a display refreshed on a timer; the final state always
   * arrives, at once (see {@link sampleRunState}). Default: every poll's state.
   */
  readonly sampleMs?: number;
}

/**
 * Folds a run's events into the state a UI shows — one state per poll: nodes with status, title,
 * text and elapsed time in order, files, progress `done/total` over task nodes, the run's elapsed
 * time, status, and the result once finished.
 *
 * A run emits the events of one reading together, synchronously; they are folded into one state
 * emitted once that batch is over (on `scheduler`, at once when the run completes or errors). So no
 * state shows half a poll: never `finish` while a node still reads `executing`, never 100 % while the
 * first task runs because only the start node was folded in yet.
 *
 * @example
 * ```ts
 * client.run('c-1').pipe(toRunState({ sampleMs: 5_000 })).subscribe((state) => {
 *   render(`${state.progress.done}/${state.progress.total}`, state.nodes);
 * });
 * ```
 */
export function toRunState(options: RunStateOptions = {}): OperatorFunction<RunEvent, RunState> {
  const scheduler = options.scheduler ?? asapScheduler;
  const sample = options.sampleMs === undefined ? undefined : sampleRunState(options.sampleMs, scheduler);
  return (source) => {
    const states = foldPolls(source, scheduler);
    return sample === undefined ? states : states.pipe(sample);
  };
}

function foldPolls(source: Observable<RunEvent>, scheduler: SchedulerLike): Observable<RunState> {
  return new Observable<RunState>((subscriber) => {
    const subscribedAt = scheduler.now();
    const fold = new RunStateFold();
    const times: NodeTimes = new Map();
    // A batch is being folded; `batchEnd` is the emission waiting for its end.
    let folding = false;
    let batchEnd: Subscription | undefined;

    const emit = (): void => {
      batchEnd?.unsubscribe();
      batchEnd = undefined;
      if (!folding) return;
      folding = false;
      subscriber.next(withElapsed(fold.state, times, scheduler.now(), subscribedAt));
    };

    const subscription = source.subscribe({
      next: (event) => {
        const now = scheduler.now();
        fold.apply(event, now - subscribedAt);
        observeTimes(times, event, now);
        if (folding) return;
        folding = true;
        batchEnd = scheduler.schedule(emit);
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
