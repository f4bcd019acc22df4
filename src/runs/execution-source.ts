import { Observable } from 'rxjs';
import type { ExecutionOutput, ExecutionSnapshot, ExecutionsApi, StartedExecution, Variables } from '../http/model.js';

/**
 * The execution endpoints as Observables: one request per subscription, cancelled by unsubscribing.
 * The run layer is written against this seam, so tests drive it with cold marble Observables in
 * virtual time.
 */
export interface ExecutionSource {
  start(canvasId: string, input?: { readonly variables?: Variables }): Observable<StartedExecution>;
  status(executionId: string): Observable<ExecutionSnapshot>;
  output(executionId: string): Observable<ExecutionOutput>;
  abort(executionId: string): Observable<void>;
}

/**
 * One Promise call as a cold Observable, after rxjs `fromFetch`: each subscription makes the call with
 * its own `AbortSignal`, and unsubscribing before the answer aborts the request.
 *
 * @example
 * ```ts
 * const status$ = fromAbortable((signal) => api.status('we-1', { signal }));
 * ```
 */
export function fromAbortable<T>(call: (signal: AbortSignal) => Promise<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    let answer: Promise<T>;
    try {
      answer = call(controller.signal);
    } catch (error: unknown) {
      subscriber.error(error);
      return undefined;
    }
    answer.then(
      (value) => {
        settled = true;
        subscriber.next(value);
        subscriber.complete();
      },
      (error: unknown) => {
        settled = true;
        subscriber.error(error);
      },
    );
    return () => {
      if (!settled) controller.abort();
    };
  });
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
export function observeExecutions(api: ExecutionsApi): ExecutionSource {
  return {
    start: (canvasId, input) => fromAbortable((signal) => api.start(canvasId, input, { signal })),
    status: (executionId) => fromAbortable((signal) => api.status(executionId, { signal })),
    output: (executionId) => fromAbortable((signal) => api.output(executionId, { signal })),
    abort: (executionId) => fromAbortable((signal) => api.abort(executionId, { signal })),
  };
}
