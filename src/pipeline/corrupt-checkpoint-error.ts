import { FlowstreamError, guardFor } from '../errors/flowstream-error.js';

/**
 * What a checkpoint store holds for a pipeline is not a checkpoint flowstream wrote (a step's entry
 * that is not JSON, or not the shape of a `StepCheckpoint`): nothing of the pipeline is started or
 * resumed from it. Names the pipeline, and the step whose entry is broken when one is.
 *
 * @example
 * ```ts
 * runPipeline(client, definition, { checkpoints: { store, pipelineId: 'nightly' } }).subscribe({
 *   error: (e) => isCorruptCheckpointError(e) && console.error(`repair ${e.pipelineId} (step ${e.step})`),
 * });
 * ```
 */
export class CorruptCheckpointError extends FlowstreamError {
  static override readonly kind: string = 'CorruptCheckpointError';

  readonly pipelineId: string;
  /** The step whose stored entry is broken. */
  readonly step: string;

  constructor(pipelineId: string, step: string, problem: string) {
    super(`The stored checkpoint of pipeline ${pipelineId} is corrupt: step ${step}: ${problem}`, 'CORRUPT_CHECKPOINT');
    this.pipelineId = pipelineId;
    this.step = step;
  }
}

/**
 * True for a {@link CorruptCheckpointError} from any realm.
 *
 * @example
 * ```ts
 * if (isCorruptCheckpointError(error)) console.log(error.pipelineId, error.step);
 * ```
 */
export const isCorruptCheckpointError = guardFor(CorruptCheckpointError);
