import { isRateLimitError, isServerError } from '../errors/api-errors.js';
import { isNetworkError, isTimeoutError } from '../errors/transport-errors.js';
import { isResponseValidationError } from '../errors/validation-errors.js';
import { isRepeatable, type Endpoint } from '../domain/endpoints.js';
import type { RetryOptions } from '../domain/options.js';

/** A run must wait past the duplicate window before its identical retry (service.md §2.2). */
const DUPLICATE_WINDOW_MS = 1_100;

/** Everything the decision depends on; `random` ∈ [0, 1) is passed in so the function stays pure. */
export interface RetryInput {
  readonly endpoint: Endpoint;
  /** Attempts made so far, the failed one included (1 after the first failure). */
  readonly attempt: number;
  readonly error: unknown;
  readonly policy: Required<RetryOptions>;
  readonly random: number;
  /**
   * Whether a request gate (the client's budget) holds every request after a 429 until the window can
   * have reset. Then the retry itself need not wait for the window: waiting here too doubled the pause.
   */
  readonly gated?: boolean;
}

/** Retry after `delayMs`, or stop; `reason` names the rule that decided (for logs). */
export type RetryDecision =
  | { readonly retry: false; readonly reason: string }
  | { readonly retry: true; readonly delayMs: number; readonly reason: string };

/** Exponential backoff with "equal jitter": half the step is fixed, half random, capped at `maxDelayMs`. */
function backoff(input: RetryInput): number {
  const step = Math.min(input.policy.maxDelayMs, input.policy.baseDelayMs * 2 ** (input.attempt - 1));
  return Math.round(step / 2 + (input.random * step) / 2);
}

function waitFor(delayMs: number, input: RetryInput, reason: string): RetryDecision {
  if (delayMs > input.policy.maxWaitMs) return { retry: false, reason: `server asks to wait ${delayMs} ms, over maxWaitMs` };
  return { retry: true, delayMs, reason };
}

/**
 * Decides whether a failed attempt is tried again, and after how long. The rules are checked in
 * order; the first that applies decides. Server timing wins over our own backoff (as in ky).
 */
export function decideRetry(input: RetryInput): RetryDecision {
  const { error, endpoint } = input;
  // 1. The budget of retries is spent: the last error is the caller's.
  if (input.attempt > input.policy.retries) return { retry: false, reason: 'retries exhausted' };
  // 2. Rate limited. The request was refused, not executed, so even a start may go again — after the
  //    window: `Retry-After` when the IP throttler sent it (service.md §1.3), else a full fixed window,
  //    since the account limiter sends no reset time (§2.1). With a gate, the gate keeps that wait for
  //    every request at once, so the retry only queues behind it. A spent daily budget will not reset soon.
  if (isRateLimitError(error)) {
    if (error.rateLimit.remainingPerDay === 0) return { retry: false, reason: 'daily limit reached' };
    // A server asking for more than the caller accepts gets its error surfaced at once, with or
    // without a gate: behind one the wait would otherwise sit in the gate's queue instead.
    const asked = error.rateLimit.retryAfterMs;
    if (asked !== undefined && asked > input.policy.maxWaitMs) return { retry: false, reason: `server asks to wait ${asked} ms, over maxWaitMs` };
    const window = input.gated === true ? 0 : (asked ?? input.policy.rateLimitWaitMs);
    // Behind a gate the budget spaces identical starts itself (budget/duplicate-starts.ts).
    const delayMs = endpoint === 'run' && input.gated !== true ? Math.max(window, DUPLICATE_WINDOW_MS) : window;
    return waitFor(delayMs, input, 'rate limited');
  }
  // 3. Anything else may have reached the server: only repeatable requests go again (service.md §2.2),
  //    and a start whose connection was never made (refused, no such host), which reached nothing.
  const reachedNothing = isNetworkError(error) && !error.connected;
  if (!isRepeatable(endpoint) && !reachedNothing) return { retry: false, reason: `${endpoint} is not repeatable` };
  // 4. No answer: the connection failed or timed out.
  if (isNetworkError(error)) return { retry: true, delayMs: backoff(input), reason: 'network' };
  if (isTimeoutError(error)) return { retry: true, delayMs: backoff(input), reason: 'timeout' };
  // 5. The server failed (5xx, E0000); honour its Retry-After when it sent one.
  if (isServerError(error)) {
    return error.retryAfterMs === undefined ? { retry: true, delayMs: backoff(input), reason: 'server error' } : waitFor(error.retryAfterMs, input, 'server error');
  }
  // 6. A body that is not JSON at all is a broken transfer, not a schema change: worth one more look.
  if (isResponseValidationError(error) && error.reason === 'not-json') return { retry: true, delayMs: backoff(input), reason: 'unreadable body' };
  // 7. Everything else (4xx, not found, schema mismatch, bad arguments) fails the same way again.
  return { retry: false, reason: 'not retryable' };
}
