import pRetry from 'p-retry';
import { abortableDelay } from './abortable-delay.js';
import { linkSignals } from './linked-signal.js';
import type { Endpoint } from '../domain/endpoints.js';
import type { Logger } from '../domain/model.js';
import type { RetryOptions } from './options.js';
import { decideRetry } from './retry-decision.js';

/**
 * What a retried call needs besides the attempt itself.
 *
 * @example
 * ```ts
 * await withRetries(attempt, { endpoint: 'status', policy: resolved.retry, signal });
 * ```
 */
export interface RetryContext {
  readonly endpoint: Endpoint;
  readonly policy: Required<RetryOptions>;
  readonly signal?: AbortSignal | undefined;
  /** Ends the wait before a retry, not an attempt on its way (`StartOptions.withdraw`). */
  readonly withdraw?: AbortSignal | undefined;
  readonly logger?: Logger | undefined;
  /** Whether a request gate stands before every attempt (see `RetryInput.gated`). */
  readonly gated?: boolean;
  /** Source of jitter; tests pin it. */
  readonly random?: () => number;
}

/**
 * Runs `attempt` until it succeeds or {@link decideRetry} says stop; the error of the last attempt is
 * the one thrown. p-retry drives the loop; its own backoff is zeroed because our decision owns the
 * timing, and every wait takes the caller's signal.
 *
 * @example
 * ```ts
 * const data = await withRetries(() => sendOnce(), { endpoint: 'status', policy, signal });
 * ```
 */
export function withRetries<T>(attempt: () => Promise<T>, context: RetryContext): Promise<T> {
  const random = context.random ?? Math.random;
  const retried = pRetry(attempt, {
    retries: context.policy.retries,
    minTimeout: 0,
    maxTimeout: 0,
    signal: context.signal,
    shouldRetry: async ({ error, attemptNumber }) => {
      if (context.signal?.aborted === true || context.withdraw?.aborted === true) return false;
      const decision = decideRetry({
        endpoint: context.endpoint,
        attempt: attemptNumber,
        error,
        policy: context.policy,
        random: random(),
        gated: context.gated === true,
      });
      if (!decision.retry) return false;
      context.logger?.debug?.(`flowstream: retrying ${context.endpoint} in ${decision.delayMs} ms (${decision.reason})`, {
        endpoint: context.endpoint,
        attempt: attemptNumber,
      });
      const wait = linkSignals([context.signal, context.withdraw]);
      try {
        await abortableDelay(decision.delayMs, wait.signal);
      } finally {
        wait.unlink();
      }
      return true;
    },
  });
  // p-retry turns a non-Error rejection into its own TypeError; an abort must reject with the
  // caller's reason, whatever it is (gate.ts promises the same of a waiting request).
  return retried.catch((error: unknown) => {
    if (context.signal?.aborted === true) throw context.signal.reason;
    throw error;
  });
}
