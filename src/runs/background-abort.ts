import { type SchedulerLike, timeout } from 'rxjs';
import type { Logger } from '../http/model.js';
import type { ExecutionSource } from './execution-source.js';

/** The abort gives up after this long, whatever happens, so nothing stays pending for ever. */
export const ABORT_DEADLINE_MS = 30_000;

export interface BackgroundAbortOptions {
  readonly scheduler: SchedulerLike;
  readonly logger?: Logger | undefined;
}

/**
 * Sends the abort of an execution in the background: it is not part of the subscription that asked
 * for it (that one is being torn down), it never throws into the caller, and it ends by
 * `ABORT_DEADLINE_MS` at the latest. Transient failures are retried by the http layer (abort is
 * repeatable, http/retry-decision.ts), so it is sent once here. Aborting a finished execution is harmless
 * (PROTOCOL §3.5), so a failure is only logged. `settled` hears when the abort answered or gave up.
 */
export function abortInBackground(source: ExecutionSource, executionId: string, options: BackgroundAbortOptions, settled?: () => void): void {
  const { scheduler, logger } = options;
  source
    .abort(executionId)
    .pipe(timeout({ first: ABORT_DEADLINE_MS, scheduler }))
    .subscribe({
      error: (error: unknown) => {
        logger?.warn('Could not abort the execution', { executionId, error });
        settled?.();
      },
      complete: () => {
        settled?.();
      },
    });
}
