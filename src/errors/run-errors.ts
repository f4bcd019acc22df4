import type { RunResult } from '../domain/model.js';
import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * The workflow ran and reached `failed` (a node failed, it was aborted, or it timed out on the service).
 * Distinct from a failed call to the server: the execution exists and `result` says how it ended.
 *
 * @example
 * ```ts
 * run$.pipe(catchError((e) => isWorkflowFailedError(e) ? of(e.result) : throwError(() => e)));
 * ```
 */
export class WorkflowFailedError extends FlowstreamError {
  static override readonly kind: string = 'WorkflowFailedError';

  readonly result: RunResult;

  constructor(result: RunResult, options: { readonly step?: string } = {}) {
    const reasons = result.failedNodes.map((node) => `${node.title ?? node.nodeId}: ${node.error?.message ?? 'failed'}`);
    const where = options.step === undefined ? '' : ` (step ${options.step})`;
    super(
      `Workflow execution ${result.executionId} failed${where}${reasons.length > 0 ? `: ${reasons.join('; ')}` : ''}`,
      'WORKFLOW_FAILED',
      { executionId: result.executionId },
    );
    this.result = result;
    if (options.step !== undefined) this.step = options.step;
  }

  /** The pipeline step that failed, when the run was part of a pipeline. */
  readonly step?: string;
}

/**
 * A run exceeded its `timeoutMs`: flowstream aborted the execution and gave up on it.
 *
 * @example
 * ```ts
 * client.run('c-1', {}, { timeoutMs: 60_000 }).subscribe({ error: (e) => isRunTimeoutError(e) && retryLater() });
 * ```
 */
export class RunTimeoutError extends FlowstreamError {
  static override readonly kind: string = 'RunTimeoutError';

  readonly timeoutMs: number;

  constructor(timeoutMs: number, executionId?: string) {
    super(
      `Run did not finish within ${timeoutMs} ms${executionId === undefined ? '' : ` (execution ${executionId} was aborted)`}`,
      'RUN_TIMEOUT',
      { executionId },
    );
    this.timeoutMs = timeoutMs;
  }
}

/**
 * True for a {@link WorkflowFailedError} from any realm.
 *
 * @example
 * ```ts
 * if (isWorkflowFailedError(error)) console.log(error.result.failedNodes);
 * ```
 */
export const isWorkflowFailedError = /* @__PURE__ */ guardFor(WorkflowFailedError);
/**
 * True for a {@link RunTimeoutError} from any realm.
 *
 * @example
 * ```ts
 * if (isRunTimeoutError(error)) console.log(error.timeoutMs);
 * ```
 */
export const isRunTimeoutError = /* @__PURE__ */ guardFor(RunTimeoutError);
