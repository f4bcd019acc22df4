import type { Observable } from 'rxjs';
import { fromAbortable } from './from-abortable.js';
import type { CallOptions, ExecutionsApi } from '../http/calls.js';
import type { ExecutionOutput, ExecutionSnapshot, StartedExecution, Variables, WorkflowPlan } from '../domain/model.js';

/**
 * The execution endpoints as Observables: one request per subscription, cancelled by unsubscribing.
 * The run layer is written against this seam, so tests drive it with cold marble Observables in
 * virtual time.
 */
export interface ExecutionSource {
  /** `withdraw` takes the start back while nothing of it is on its way (`StartOptions.withdraw`). */
  start(canvasId: string, input?: { readonly variables?: Variables }, withdraw?: AbortSignal): Observable<StartedExecution>;
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
    start: (canvasId, input, withdraw) =>
      fromAbortable((signal) => {
        if (withdraw === undefined) return api.start(canvasId, input, { signal });
        // A withdrawal cancels the call only while nothing of it is on its way (`StartOptions.onSending`).
        const call = new AbortController();
        let sending = false;
        const stop = (): void => {
          if (!sending) call.abort(withdraw.reason);
        };
        const onCancel = (): void => {
          call.abort(signal.reason);
        };
        signal.addEventListener('abort', onCancel, { once: true });
        withdraw.addEventListener('abort', stop, { once: true });
        return api
          .start(canvasId, input, {
            signal: call.signal,
            onSending: (now) => {
              sending = now;
              if (withdraw.aborted) stop();
            },
          })
          .finally(() => {
            signal.removeEventListener('abort', onCancel);
            withdraw.removeEventListener('abort', stop);
          });
      }),
    status: (executionId) => fromAbortable((signal) => api.status(executionId, { signal })),
    output: (executionId) => fromAbortable((signal) => api.output(executionId, { signal })),
    abort: (executionId) => fromAbortable((signal) => api.abort(executionId, { signal })),
  };
}
