/**
 * Where a step's execution stood when the checkpoint was taken.
 * `starting`: its start was about to leave, or left, and no answer was recorded — on resume the step
 * is in doubt (its execution may exist, service.md §2.2). `aborted`: the pipeline aborted it.
 *
 * @example
 * ```ts
 * const status: StepCheckpointStatus = 'running';
 * ```
 */
export type StepCheckpointStatus = 'starting' | 'running' | 'finish' | 'failed' | 'aborted';

/**
 * One step that was started: its execution (once its start answered), where it stood, and which
 * start of the step it is.
 *
 * @example
 * ```ts
 * const entry: StepCheckpoint = { executionId: 'we-abc', status: 'running', attempt: 1, attemptedAt: Date.now() };
 * ```
 */
export interface StepCheckpoint {
  /** Absent while `starting`: the start has not answered. */
  readonly executionId?: string;
  readonly status: StepCheckpointStatus;
  /** Which start of the step: 1, and one more for each retry or start again. */
  readonly attempt?: number;
  /** When that start was attempted (ms since the epoch, on the pipeline's clock). */
  readonly attemptedAt?: number;
}

/**
 * The state of a pipeline that survives a process restart: plain JSON, step name → execution. Steps
 * without an entry had not started. Give it back as `resume` to re-attach instead of starting again
 * (or keep it in a `CheckpointStore`).
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
export function isResumable(entry: StepCheckpoint | undefined): entry is StepCheckpoint & { readonly executionId: string } {
  if (entry?.executionId === undefined) return false;
  switch (entry.status) {
    case 'running':
    case 'finish':
      return true;
    case 'starting':
    case 'failed':
    case 'aborted':
      return false;
    default: {
      const unknown: never = entry.status;
      return unknown;
    }
  }
}

const STATUSES: ReadonlySet<string> = new Set<StepCheckpointStatus>(['starting', 'running', 'finish', 'failed', 'aborted']);

/** A step's entry from what was stored, sent or given back as `resume`, or why it is not one. */
export function entryOf(value: unknown): StepCheckpoint | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const { status, executionId, attempt, attemptedAt } = value as Readonly<Record<string, unknown>>;
  if (typeof status !== 'string' || !STATUSES.has(status)) return `unknown status ${JSON.stringify(status)}`;
  if (executionId !== undefined && typeof executionId !== 'string') return 'executionId is not a string';
  if (attempt !== undefined && !(Number.isInteger(attempt) && (attempt as number) >= 1)) return 'attempt is not a whole number ≥ 1';
  if (attemptedAt !== undefined && !Number.isFinite(attemptedAt)) return 'attemptedAt is not a number';
  return {
    status: status as StepCheckpointStatus,
    ...(executionId === undefined ? {} : { executionId }),
    ...(attempt === undefined ? {} : { attempt: attempt as number }),
    ...(attemptedAt === undefined ? {} : { attemptedAt: attemptedAt as number }),
  };
}
