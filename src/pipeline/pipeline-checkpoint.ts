/**
 * Where a step's execution stood when the checkpoint was taken.
 * `aborted`: the pipeline aborted it (`onStepFailure: 'abort-all'`).
 *
 * @example
 * ```ts
 * const status: StepCheckpointStatus = 'running';
 * ```
 */
export type StepCheckpointStatus = 'running' | 'finish' | 'failed' | 'aborted';

/**
 * One started step: its execution and where it stood.
 *
 * @example
 * ```ts
 * const entry: StepCheckpoint = { executionId: 'we-abc', status: 'running' };
 * ```
 */
export interface StepCheckpoint {
  readonly executionId: string;
  readonly status: StepCheckpointStatus;
}

/**
 * The state of a pipeline that survives a process restart: plain JSON, step name → execution. Steps
 * without an entry had not started. Give it back as `resume` to re-attach instead of starting again.
 *
 * @example
 * ```ts
 * localStorage.setItem('pipeline', JSON.stringify(checkpoint));
 * runPipeline(client, definition, { resume: JSON.parse(localStorage.getItem('pipeline')!) as PipelineCheckpoint });
 * ```
 */
export interface PipelineCheckpoint<Name extends string = string> {
  readonly steps: Readonly<Partial<Record<Name, StepCheckpoint>>>;
}

/** The checkpoint with one step's entry replaced (a new object: checkpoints already handed out stay as they were). */
export function withStep<Name extends string>(checkpoint: PipelineCheckpoint<Name>, step: Name, entry: StepCheckpoint): PipelineCheckpoint<Name> {
  return { steps: { ...checkpoint.steps, [step]: entry } };
}

/** Whether a recorded step is re-attached with `watch` (its execution exists and did not fail) rather than started. */
export function isResumable(entry: StepCheckpoint | undefined): entry is StepCheckpoint {
  if (entry === undefined) return false;
  switch (entry.status) {
    case 'running':
    case 'finish':
      return true;
    case 'failed':
    case 'aborted':
      return false;
    default: {
      const unknown: never = entry.status;
      return unknown;
    }
  }
}
