import { MAX_TIMER_MS } from './options.js';

/**
 * Waits `ms` (at most 2^31 − 1: callers bound their waits, see `retry.maxWaitMs`), or rejects with `signal.reason` as soon as the signal aborts. The abort listener is
 * removed when the wait ends either way, so long-lived signals do not collect listeners.
 *
 * @example
 * ```ts
 * await abortableDelay(500, controller.signal);
 * ```
 */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    // A timer keeps at most 2^31 − 1 ms; a longer one would fire at once.
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.min(ms, MAX_TIMER_MS));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
