import { type MonoTypeOperatorFunction, of, retry, throwError } from 'rxjs';
import { isWorkflowFailedError } from '../errors/run-errors.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';

/**
 * Re-runs a workflow that failed, up to `count` more times: a run is cold, so resubscribing starts a
 * new execution. Only `WorkflowFailedError` is retried. A transport error may leave its execution
 * running (a run that errors does not abort it), and a start whose answer was lost may have reached the
 * server (service.md §2.2), so re-running then could run the workflow twice. The run goes again at
 * once, on no timer of its own (every wait is the client's, on its scheduler): identical starts are
 * spaced past the 1 s duplicate window by the client's budget (§2.2), not here.
 *
 * @example
 * ```ts
 * client.run('c-flaky').pipe(retryFailedWorkflow(2), runResult());
 * ```
 */
export function retryFailedWorkflow<T>(count: number): MonoTypeOperatorFunction<T> {
  if (!(Number.isInteger(count) && count >= 0)) throw new InvalidArgumentError('retry', `must be a whole number ≥ 0, got ${count}`);
  return retry({ count, delay: (error: unknown) => (isWorkflowFailedError(error) ? of(0) : throwError(() => error)) });
}
