import type { Logger } from '../domain/model.js';
import type { ExecutionSource } from './execution-source.js';

export interface BackgroundAbortOptions {
  readonly logger?: Logger | undefined;
}

/**
 * Sends the abort of an execution in the background: it is not part of the subscription that asked
 * for it (that one is being torn down) and it never throws into the caller. It has no deadline of its
 * own: an execution left running spends credits, and the request budget may rightly hold an abort
 * longer than any fixed deadline (a 429's pause, a mass abort draining at the service's limit). Every
 * wait on its way is bounded instead: the budget's pause by the service's window, each attempt by the
 * request timeout, the attempts by the retry policy (abort is repeatable, http/retry-decision.ts), so it
 * is sent once here. Aborting a finished execution is harmless (PROTOCOL §3.5), so a failure is only
 * logged. `settled` hears when the abort answered or failed.
 */
export function abortInBackground(source: ExecutionSource, executionId: string, options: BackgroundAbortOptions, settled?: () => void): void {
  const { logger } = options;
  source
    .abort(executionId)
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
