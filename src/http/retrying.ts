import pRetry from 'p-retry';
import type { SchedulerLike } from 'rxjs';
import type { Endpoint } from '../domain/endpoints.js';
import type { Logger } from '../domain/model.js';
import { abortableDelay } from './abortable-delay.js';
import type { RetryOptions } from '../domain/options.js';
import { decideRetry, type RetryDecision } from './retry-decision.js';

/** What a retried call needs besides the attempt itself. */
export interface RetryContext {
  readonly endpoint: Endpoint;
  readonly policy: Required<RetryOptions>;
  readonly signal?: AbortSignal | undefined;
  readonly logger?: Logger | undefined;
  /** The client's clock: the waits between attempts are its timers. */
  readonly scheduler: SchedulerLike;
  /** Whether a request gate stands before every attempt (see `RetryInput.gated`). */
  readonly gated?: boolean;
  /** Source of jitter; tests pin it. */
  readonly random?: () => number;
}

/**
 * Runs `attempt` until it succeeds or {@link decideRetry} says stop; the error of the last attempt is
 * the one thrown. p-retry drives the loop as designed: `onFailedAttempt` decides and waits (on the
 * client's scheduler, ending with the caller's signal), `shouldRetry` reports the decision. Its own
 * backoff is zeroed because our decision owns the timing.
 */
export function withRetries<T>(attempt: () => Promise<T>, context: RetryContext): Promise<T> {
  const random = context.random ?? Math.random;
  let decision: RetryDecision = { retry: false, reason: 'no failure yet' };
  const retried = pRetry(attempt, {
    retries: context.policy.retries,
    minTimeout: 0,
    maxTimeout: 0,
    signal: context.signal,
    onFailedAttempt: async ({ error, attemptNumber }) => {
      decision = decideRetry({
        endpoint: context.endpoint,
        attempt: attemptNumber,
        error,
        policy: context.policy,
        random: random(),
        gated: context.gated === true,
      });
      if (!decision.retry || context.signal?.aborted === true) return;
      context.logger?.debug?.(`flowstream: retrying ${context.endpoint} in ${decision.delayMs} ms (${decision.reason})`, {
        endpoint: context.endpoint,
        attempt: attemptNumber,
      });
      await abortableDelay(decision.delayMs, context.scheduler, context.signal);
    },
    shouldRetry: () => decision.retry && context.signal?.aborted !== true,
  });
  // p-retry turns a non-Error rejection into its own TypeError; an abort must reject with the
  // caller's reason, whatever it is (a request gate promises the same of a waiting request).
  return retried.catch((error: unknown) => {
    if (context.signal?.aborted === true) throw context.signal.reason;
    throw error;
  });
}
