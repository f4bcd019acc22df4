import { asyncScheduler, defer, type OperatorFunction, type SchedulerLike, scan } from 'rxjs';
import type { RunEvent } from './events.js';
import { INITIAL_RUN_STATE, reduceRunState, type RunState } from './run-state.js';

/**
 * Folds a run's events into the state a UI shows: nodes with status and title in order, text per
 * node, files, progress `done/total`, elapsed time, status, and the result once finished.
 *
 * @example
 * ```ts
 * client.run('c-1').pipe(toRunState()).subscribe((state) => {
 *   render(`${state.progress.done}/${state.progress.total}`, state.nodes);
 * });
 * ```
 */
export function toRunState(options: { readonly scheduler?: SchedulerLike } = {}): OperatorFunction<RunEvent, RunState> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    defer(() => {
      const subscribedAt = scheduler.now();
      return source.pipe(
        scan((state, event) => ({ ...reduceRunState(state, event), elapsedMs: scheduler.now() - subscribedAt }), INITIAL_RUN_STATE),
      );
    });
}
