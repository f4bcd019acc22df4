import { Observable } from 'rxjs';

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && 'then' in value && typeof value.then === 'function';
}

/**
 * A task that may return a Promise as a cold Observable that aborts the task's signal on
 * unsubscribe, as rxjs `fromFetch` does: the Promise code of a pipeline (downloads, uploads, a step's
 * input) stays cancellable and behind an Observable seam. A task that answers at once (no Promise)
 * emits synchronously, so pure inputs keep runs in virtual time under test.
 *
 * @example
 * ```ts
 * fromAbortable((signal) => downloadFile(file, { signal })).subscribe((blob) => console.log(blob.size));
 * ```
 */
export function fromAbortable<T>(task: (signal: AbortSignal) => T | PromiseLike<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    let answer: T | PromiseLike<T>;
    try {
      answer = task(controller.signal);
    } catch (error) {
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
        subscriber.next(value);
        subscriber.complete();
      },
      (error: unknown) => {
        subscriber.error(error);
      },
    );
    return () => {
      controller.abort();
    };
  });
}
