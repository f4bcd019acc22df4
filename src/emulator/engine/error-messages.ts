/** Node error texts, in the service's own formats (service.md §4.3). */

/** service.md §4.3: a task node that finished carries the string `"[]"`. */
export const FINISHED_ERROR_MESSAGE = '[]';

/** service.md §4.3: a failed task node carries a JSON-encoded array of strings. */
export const failedErrorMessage = (errors: readonly string[]): string => JSON.stringify(errors);

/** service.md §3.5 */
export const ABORTED_ERROR_MESSAGE = 'Workflow aborted by user';

/** service.md §3.6: with the execution's age when the timeout struck, in whole seconds, e.g. `(1801s)`. */
export const workflowTimeoutErrorMessage = (ageMs: number): string => `Workflow execution timeout exceeded (${String(Math.floor(ageMs / 1_000))}s)`;

/** A node that ran 30 minutes, as the spec profile plays it (on the service, service.md §3.6, it does not appear). */
export const NODE_TIMEOUT_ERROR_MESSAGE = 'Node execution timeout exceeded (1800s)';

/** service.md §3.7: credits are checked when a node starts. */
export const CREDIT_ERROR_MESSAGE = 'credit not available: insufficient credits to run this node';
