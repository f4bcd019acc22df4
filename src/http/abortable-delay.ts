import type { SchedulerLike } from 'rxjs';
import { MAX_TIMER_MS } from './options.js';

/**
 * Waits `ms` on `scheduler` (the client's one clock), or rejects with `signal.reason` as soon as the
 * signal aborts. The abort listener and the timer are removed when the wait ends either way, so
 * long-lived signals do not collect listeners.
 */
export function abortableDelay(ms: number, scheduler: SchedulerLike, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      timer.unsubscribe();
      reject(signal?.reason as Error);
    };
    // A timer keeps at most 2^31 − 1 ms; a longer one would fire at once (callers bound their waits).
    const timer = scheduler.schedule(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.min(ms, MAX_TIMER_MS));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
