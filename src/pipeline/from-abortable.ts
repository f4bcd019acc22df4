import { Observable } from 'rxjs';

/**
 * A Promise-returning task as a cold Observable that aborts the task's signal on unsubscribe, as
 * rxjs `fromFetch` does: the Promise code of a pipeline (downloads, uploads, a step's input) stays
 * cancellable and behind an Observable seam.
 *
 * @example
 * ```ts
 * fromAbortable((signal) => downloadFile(file, { signal })).subscribe((blob) => console.log(blob.size));
 * ```
 */
export function fromAbortable<T>(task: (signal: AbortSignal) => T | PromiseLike<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    // Promise.resolve().then: a task that throws synchronously errors the Observable like a rejection.
    Promise.resolve()
      .then(() => task(controller.signal))
      .then(
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
