import { map, Observable } from 'rxjs';
import { fromAbortable } from './from-abortable.js';
import type { CallOptions, ExecutionsApi } from '../http/calls.js';
import type { ExecutionOutput, ExecutionSnapshot, StartedExecution, Variables, WorkflowPlan } from '../domain/model.js';

/**
 * How a start goes: `sending` says whether a request of it is on its way (`true` from the moment an
 * attempt leaves: the execution may exist; `false` when that attempt failed and nothing is on its way,
 * see `StartOptions.onSending`), then `started` with the execution.
 */
export type StartProgress = { readonly type: 'sending'; readonly sending: boolean } | { readonly type: 'started'; readonly execution: StartedExecution };

/**
 * The execution endpoints as Observables: one request per subscription, cancelled by unsubscribing.
 * The run layer is written against this seam, so tests drive it with cold marble Observables in
 * virtual time.
 */
export interface ExecutionSource {
  /** Unsubscribing while nothing of the start is on its way takes it back: no execution exists. */
  start(canvasId: string, input?: { readonly variables?: Variables }): Observable<StartProgress>;
  status(executionId: string): Observable<ExecutionSnapshot>;
  output(executionId: string): Observable<ExecutionOutput>;
  abort(executionId: string): Observable<void>;
  /** The workflow's plan, to check a run's variables against (`RunOptions.checkVariables`). */
  readonly plan?: (canvasId: string) => Observable<WorkflowPlan>;
}

/**
 * Puts an `ExecutionsApi` (Promises taking a signal) behind the Observable seam.
 *
 * @example
 * ```ts
 * const source = observeExecutions(client.executions);
 * source.status('we-1').subscribe(console.log);
 * ```
 */
export function observeExecutions(api: ExecutionsApi, plans?: { get(canvasId: string, options?: CallOptions): Promise<WorkflowPlan> }): ExecutionSource {
  return {
    ...(plans === undefined ? {} : { plan: (canvasId: string) => fromAbortable((signal) => plans.get(canvasId, { signal })) }),
    start: (canvasId, input) =>
      new Observable<StartProgress>((subscriber) =>
        fromAbortable((signal) =>
          api.start(canvasId, input, {
            signal,
            onSending: (sending) => {
              subscriber.next({ type: 'sending', sending });
            },
          }),
        )
          .pipe(map((execution): StartProgress => ({ type: 'started', execution })))
          .subscribe(subscriber),
      ),
    status: (executionId) => fromAbortable((signal) => api.status(executionId, { signal })),
    output: (executionId) => fromAbortable((signal) => api.output(executionId, { signal })),
    abort: (executionId) => fromAbortable((signal) => api.abort(executionId, { signal })),
  };
}
