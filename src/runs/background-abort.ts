import { retry, type SchedulerLike, throwError, timer, timeout } from 'rxjs';
import { guardFor } from '../errors/flowstream-error.js';
import type { Logger } from '../http/model.js';
import type { ExecutionSource } from './execution-source.js';

/** Tries after the first; the http layer has already retried each attempt on its own. */
export const ABORT_RETRIES = 3;
/** The first pause between tries, doubled each time. */
export const ABORT_RETRY_DELAY_MS = 1000;
/** The abort gives up after this long, whatever happens, so nothing stays pending for ever. */
export const ABORT_DEADLINE_MS = 30_000;

/** Failures that may pass: no answer, a 5xx, the rate limit (PROTOCOL §2.1). Judged by brand, across realms. */
const TRANSIENT = ['NetworkError', 'TimeoutError', 'ServerError', 'RateLimitError'].map((kind) => guardFor(kind));

export function isTransientError(error: unknown): boolean {
  return TRANSIENT.some((isKind) => isKind(error));
}

export interface BackgroundAbortOptions {
  readonly scheduler: SchedulerLike;
  readonly logger?: Logger | undefined;
}

/**
 * Sends the abort of an execution in the background: it is not part of the subscription that asked
 * for it (that one is being torn down), it never throws into the caller, it is retried on transient
 * failures and it ends by `ABORT_DEADLINE_MS` at the latest. Aborting a finished execution is harmless
 * (PROTOCOL §3.5), so a failure is only logged.
 */
export function abortInBackground(source: ExecutionSource, executionId: string, options: BackgroundAbortOptions): void {
  const { scheduler, logger } = options;
  source
    .abort(executionId)
    .pipe(
      retry({
        count: ABORT_RETRIES,
        delay: (error: unknown, attempt) =>
          isTransientError(error) ? timer(ABORT_RETRY_DELAY_MS * 2 ** (attempt - 1), scheduler) : throwError(() => error),
      }),
      timeout({ first: ABORT_DEADLINE_MS, scheduler }),
    )
    .subscribe({
      error: (error: unknown) => {
        logger?.warn('Could not abort the execution', { executionId, error });
      },
    });
}
