import type { Observable, Subscription } from 'rxjs';

type Ending = { readonly failed: false } | { readonly failed: true; readonly error: unknown };

/**
 * An Observable as an async iterable, for code without RxJS. Each iteration subscribes once, at its
 * first `next()`; events are buffered until read. Leaving the loop (`break`, `return`, a throw)
 * unsubscribes — for a run, that aborts the execution like any unsubscribe.
 *
 * @example
 * ```ts
 * for await (const event of toAsyncIterable(client.run('c-1'))) {
 *   if (event.type === 'message') process.stdout.write(event.delta);
 *   if (event.type === 'node' && event.status === 'failed') break; // aborts the execution
 * }
 * ```
 */
export function toAsyncIterable<T>(source: Observable<T>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterate(source) };
}

function iterate<T>(source: Observable<T>): AsyncIterator<T, undefined> {
  const buffered: T[] = [];
  let ending: Ending | undefined;
  let waiting: { resolve: (result: IteratorResult<T, undefined>) => void; reject: (error: unknown) => void } | undefined;
  let subscription: Subscription | undefined;

  const settleWaiting = (): void => {
    const pending = waiting;
    if (pending === undefined) return;
    if (buffered.length > 0) {
      waiting = undefined;
      pending.resolve({ done: false, value: buffered.shift() as T });
    } else if (ending !== undefined) {
      waiting = undefined;
      if (ending.failed) pending.reject(ending.error);
      else pending.resolve({ done: true, value: undefined });
      ending = { failed: false };
    }
  };

  const finish = (): IteratorResult<T, undefined> => {
    subscription?.unsubscribe();
    buffered.length = 0;
    ending = { failed: false };
    settleWaiting();
    return { done: true, value: undefined };
  };

  return {
    next: () =>
      new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        subscription ??= source.subscribe({
          next: (value) => {
            buffered.push(value);
            settleWaiting();
          },
          error: (error: unknown) => {
            ending = { failed: true, error };
            settleWaiting();
          },
          complete: () => {
            ending = { failed: false };
            settleWaiting();
          },
        });
        settleWaiting();
      }),
    return: () => Promise.resolve(finish()),
  };
}
