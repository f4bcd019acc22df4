import { FlowstreamError, guardFor } from '../errors/flowstream-error.js';

/**
 * A worker could not run a pipeline at all — no definition by that name, a definition that is not a
 * DAG, a store that failed — so its job failed in BullMQ. (A pipeline whose steps failed is not
 * this: its job ends with a `PipelineResult` of status `failed`.)
 *
 * @example
 * ```ts
 * queue.events$(pipelineId).subscribe({ error: (e) => isPipelineJobFailedError(e) && console.error(e.pipelineId, e.reason) });
 * ```
 */
export class PipelineJobFailedError extends FlowstreamError {
  static override readonly kind: string = 'PipelineJobFailedError';

  readonly pipelineId: string;
  /** BullMQ's `failedReason`: the message of what the worker threw. */
  readonly reason: string;

  constructor(pipelineId: string, reason: string) {
    super(`Pipeline ${pipelineId} could not run: ${reason}`, 'PIPELINE_JOB_FAILED');
    this.pipelineId = pipelineId;
    this.reason = reason;
  }
}

/**
 * True for a {@link PipelineJobFailedError} from any realm.
 *
 * @example
 * ```ts
 * if (isPipelineJobFailedError(error)) console.log(error.reason);
 * ```
 */
export const isPipelineJobFailedError = guardFor(PipelineJobFailedError);
