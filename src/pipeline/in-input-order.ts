import { type MonoTypeOperatorFunction, Observable } from 'rxjs';

/**
 * Re-orders values tagged with their `index` (0, 1, 2, … each once) into index order: a value waits
 * until every earlier one has been emitted. Completes when the source does; values stuck behind a
 * missing index are not emitted (the source broke its promise, e.g. by erroring).
 *
 * @example
 * ```ts
 * of({ index: 1 }, { index: 0 }).pipe(inInputOrder()); // { index: 0 }, { index: 1 }
 * ```
 */
export function inInputOrder<T extends { readonly index: number }>(): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const waiting = new Map<number, T>();
      let next = 0;
      return source.subscribe({
        next: (value) => {
          waiting.set(value.index, value);
          for (let ready = waiting.get(next); ready !== undefined; ready = waiting.get(next)) {
            waiting.delete(next);
            next += 1;
            subscriber.next(ready);
          }
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          subscriber.complete();
        },
      });
    });
}
