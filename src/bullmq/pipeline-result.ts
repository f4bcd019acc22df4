import { isFlowstreamError } from '../errors/flowstream-error.js';
import { StepInDoubtError } from '../errors/step-in-doubt-error.js';
import type { PipelineCheckpoint, StepCheckpoint } from '../pipeline/pipeline-checkpoint.js';
import type { StepOutcome } from '../pipeline/pipeline-events.js';

/**
 * How a pipeline ended: every step finished, a step failed (after its retries, or in doubt), or it
 * was cancelled.
 *
 * @example
 * ```ts
 * const status: PipelineStatus = 'cancelled';
 * ```
 */
export type PipelineStatus = 'finish' | 'failed' | 'cancelled';

/**
 * One step's end as plain JSON: what the job keeps as its result and what every process reads.
 * `aborted`: running (or waiting) when the pipeline was cancelled, or when another step failed
 * under `abort-all`. `skipped`: never started, because `blockedBy` failed.
 *
 * @example
 * ```ts
 * const summary: StepSummary = { status: 'finish', executionId: 'we-abc', attempt: 1 };
 * ```
 */
export interface StepSummary {
  readonly status: 'finish' | 'failed' | 'aborted' | 'skipped';
  /** The step's (last) execution, when one is known. */
  readonly executionId?: string;
  readonly attempt?: number;
  /** Why it failed: the error's name, message and flowstream `code` (e.g. `STEP_IN_DOUBT`). */
  readonly error?: { readonly name: string; readonly message: string; readonly code?: string };
  readonly blockedBy?: string;
}

/**
 * The result of a pipeline job: its status and every step's end, in declaration order. Plain JSON
 * (the BullMQ job's return value); outputs are read with `client.executions.output(executionId)`.
 *
 * @example
 * ```ts
 * const result: PipelineResult = { pipelineId: 'nightly', status: 'finish', steps: { research: { status: 'finish', executionId: 'we-abc' } } };
 * ```
 */
export interface PipelineResult {
  readonly pipelineId: string;
  readonly status: PipelineStatus;
  readonly steps: Readonly<Record<string, StepSummary>>;
}

/** A failure wins; else an aborted step means a cancel (under `abort-all` a step aborts only beside a failure). */
export function pipelineStatus(steps: Readonly<Record<string, StepSummary>>): PipelineStatus {
  const statuses = Object.values(steps).map((step) => step.status);
  if (statuses.includes('failed')) return 'failed';
  if (statuses.includes('aborted')) return 'cancelled';
  return 'finish';
}

/** The result of a pipeline that ran to its end: its outcomes, with each step's execution from the last checkpoint. */
export function pipelineResult(pipelineId: string, outcomes: Readonly<Record<string, StepOutcome<string>>>, checkpoint: PipelineCheckpoint): PipelineResult {
  const steps: Record<string, StepSummary> = {};
  for (const [step, outcome] of Object.entries(outcomes)) steps[step] = stepSummary(outcome, checkpoint.steps[step]);
  return { pipelineId, status: pipelineStatus(steps), steps };
}

/**
 * The result of a pipeline cancelled before its worker ran it: recorded ends stay, steps running
 * then are aborted, a step in doubt failed, and steps never started are aborted too.
 */
export function cancelledResult(pipelineId: string, stepNames: readonly string[], checkpoint: PipelineCheckpoint): PipelineResult {
  const steps: Record<string, StepSummary> = {};
  for (const step of stepNames) {
    const entry = checkpoint.steps[step];
    if (entry === undefined) {
      steps[step] = { status: 'aborted' };
      continue;
    }
    const known = knownOf(entry);
    switch (entry.status) {
      case 'finish':
      case 'failed':
      case 'aborted':
        steps[step] = { status: entry.status, ...known };
        break;
      case 'starting':
        steps[step] = { status: 'failed', ...known, error: errorSummary(new StepInDoubtError(step, entry.attemptedAt ?? 0, entry.attempt ?? 1)) };
        break;
      case 'running':
        steps[step] = { status: 'aborted', ...known };
        break;
      default: {
        const unknown: never = entry.status;
        return unknown;
      }
    }
  }
  return { pipelineId, status: 'cancelled', steps };
}

function stepSummary(outcome: StepOutcome<string>, entry: StepCheckpoint | undefined): StepSummary {
  const known = knownOf(entry);
  switch (outcome.status) {
    case 'finish':
      return { status: 'finish', ...known, executionId: outcome.result.executionId };
    case 'failed':
      return { status: 'failed', ...known, error: errorSummary(outcome.error) };
    case 'aborted':
      return { status: 'aborted', ...known };
    case 'skipped':
      return { status: 'skipped', blockedBy: outcome.blockedBy };
    case 'detached':
      // runPipeline ends with `detached`, never `finished`, once it lets go of a step.
      throw new Error(`step outcome 'detached' in a finished pipeline`);
    default: {
      const unknown: never = outcome;
      return unknown;
    }
  }
}

/** What the checkpoint knows of a step's execution. */
function knownOf(entry: StepCheckpoint | undefined): Pick<StepSummary, 'executionId' | 'attempt'> {
  return { ...(entry?.executionId === undefined ? {} : { executionId: entry.executionId }), ...(entry?.attempt === undefined ? {} : { attempt: entry.attempt }) };
}

/** An error as JSON can carry it, the API key never in it (flowstream errors leave it out of their messages). */
function errorSummary(error: unknown): NonNullable<StepSummary['error']> {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  return { name: error.name, message: error.message, ...(isFlowstreamError(error) ? { code: error.code } : {}) };
}
