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

interface Pending<T> {
  readonly resolve: (result: IteratorResult<T, undefined>) => void;
  readonly reject: (error: unknown) => void;
}

function iterate<T>(source: Observable<T>): AsyncIterator<T, undefined> {
  const buffered: T[] = [];
  let ending: Ending | undefined;
  // Every `next()` not answered yet, in call order: the protocol lets a caller ask again without
  // awaiting, and each call gets the next value (or the end) in turn.
  const waiting: Pending<T>[] = [];
  let subscription: Subscription | undefined;

  const settleWaiting = (): void => {
    for (let pending = waiting[0]; pending !== undefined; pending = waiting[0]) {
      if (buffered.length > 0) {
        waiting.shift();
        pending.resolve({ done: false, value: buffered.shift() as T });
      } else if (ending !== undefined) {
        waiting.shift();
        // The error goes to the first caller that meets the end; later ones are simply done.
        if (ending.failed) pending.reject(ending.error);
        else pending.resolve({ done: true, value: undefined });
        ending = { failed: false };
      } else {
        return;
      }
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
        waiting.push({ resolve, reject });
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
