import { Observable } from 'rxjs';

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && 'then' in value && typeof value.then === 'function';
}

/**
 * A call that takes an `AbortSignal` as a cold Observable, after rxjs `fromFetch`: each subscription
 * makes the call with its own signal, and unsubscribing before the answer aborts it. The run layer
 * puts every request behind this seam; pipelines put downloads, uploads and a step's input there.
 * A call that answers at once (no Promise) emits synchronously, so pure inputs keep tests in virtual time.
 *
 * @example
 * ```ts
 * const status$ = fromAbortable((signal) => api.status('we-1', { signal }));
 * ```
 */
export function fromAbortable<T>(call: (signal: AbortSignal) => T | PromiseLike<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    let answer: T | PromiseLike<T>;
    try {
      answer = call(controller.signal);
    } catch (error: unknown) {
      subscriber.error(error);
      return undefined;
    }
    if (!isPromiseLike(answer)) {
      subscriber.next(answer);
      subscriber.complete();
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
