import type { NodeStatus } from '../domain/model.js';
import type { PipelineCheckpoint, StepCheckpointStatus } from '../pipeline/pipeline-checkpoint.js';
import type { PipelineEvent, StepOutcome } from '../pipeline/pipeline-events.js';

/**
 * Where a step of a pipeline job stands: `waiting` (not started yet), `starting` (its start is on
 * its way), `running`, or how it ended.
 *
 * @example
 * ```ts
 * const state: StepState = 'running';
 * ```
 */
export type StepState = 'waiting' | 'starting' | 'running' | 'finish' | 'failed' | 'aborted' | 'skipped' | 'detached';

/**
 * One step in a pipeline job's progress: its state, its execution once started, and its nodes —
 * `done` of `total` seen so far have ended (`failed` of them failed).
 *
 * @example
 * ```ts
 * const step: StepProgress = { state: 'running', executionId: 'we-abc', nodes: { done: 2, failed: 0, total: 5 } };
 * ```
 */
export interface StepProgress {
  readonly state: StepState;
  readonly executionId?: string;
  readonly nodes: { readonly done: number; readonly failed: number; readonly total: number };
}

/**
 * What a pipeline job reports as its BullMQ progress (`job.progress`, shown by bull-board and
 * `queue.getJobs()`): every step of the pipeline by name, and how many of them have ended.
 *
 * @example
 * ```ts
 * const jobs = await new Queue('flowstream-pipelines', { connection }).getJobs(['active']);
 * const progress = jobs[0]?.progress as PipelineJobProgress;
 * console.log(`${progress.done}/${progress.total}`, progress.steps.research?.state);
 * ```
 */
export interface PipelineJobProgress {
  readonly steps: Readonly<Record<string, StepProgress>>;
  /** Steps that ended, whatever the way. */
  readonly done: number;
  readonly total: number;
}

const ENDED: ReadonlySet<StepState> = new Set(['finish', 'failed', 'aborted', 'skipped', 'detached']);
const NODE_ENDED: ReadonlySet<NodeStatus> = new Set(['finish', 'failed']);
const NO_NODES: StepProgress['nodes'] = { done: 0, failed: 0, total: 0 };

function ended(status: NodeStatus | undefined): number {
  return status !== undefined && NODE_ENDED.has(status) ? 1 : 0;
}

function counted(steps: Readonly<Record<string, StepProgress>>): PipelineJobProgress {
  const entries = Object.values(steps);
  return { steps, done: entries.filter((step) => ENDED.has(step.state)).length, total: entries.length };
}

function stateOfCheckpoint(status: StepCheckpointStatus): StepState {
  return status;
}

function stateOfOutcome(outcome: StepOutcome<string>): StepState {
  return outcome.status;
}

/**
 * The progress of a pipeline job before its first event: every step waiting, or where the checkpoint
 * it resumes from left it.
 *
 * @example
 * ```ts
 * const progress = initialJobProgress(['research', 'summary'], { steps: {} });
 * ```
 */
export function initialJobProgress(stepNames: readonly string[], resumed: PipelineCheckpoint): PipelineJobProgress {
  const steps: Record<string, StepProgress> = {};
  for (const name of stepNames) {
    const entry = resumed.steps[name];
    steps[name] = entry === undefined ? { state: 'waiting', nodes: NO_NODES } : { state: stateOfCheckpoint(entry.status), ...(entry.executionId === undefined ? {} : { executionId: entry.executionId }), nodes: NO_NODES };
  }
  return counted(steps);
}

/**
 * The progress after one pipeline event: a checkpoint moves steps (`starting`, `running` with its
 * execution, their ends), a node of a step's run counts towards its nodes (counted once seen, done
 * while its status is an end, failed while it is `failed`), a step's end and the pipeline's outcomes settle the states. The
 * same object when nothing shown changed (its partial output, its files).
 *
 * @example
 * ```ts
 * progress = jobProgressAfter(progress, event);
 * ```
 */
export function jobProgressAfter(progress: PipelineJobProgress, event: PipelineEvent<string>): PipelineJobProgress {
  switch (event.type) {
    case 'checkpoint': {
      let steps = progress.steps;
      for (const [name, entry] of Object.entries(event.checkpoint.steps)) {
        const current = steps[name];
        if (entry === undefined || current === undefined) continue;
        const state = stateOfCheckpoint(entry.status);
        // A new attempt of the step (a retry) starts counting its nodes again.
        const nodes = entry.executionId === current.executionId ? current.nodes : NO_NODES;
        if (state === current.state && entry.executionId === current.executionId) continue;
        steps = { ...steps, [name]: { state, ...(entry.executionId === undefined ? {} : { executionId: entry.executionId }), nodes } };
      }
      return steps === progress.steps ? progress : counted(steps);
    }
    case 'step': {
      const current = progress.steps[event.step];
      if (current === undefined) return progress;
      const run = event.event;
      if (run.type === 'node') {
        // Counted by where each node is now: a node that leaves an end (rewritten) is no longer done.
        const seen = run.previous === undefined ? 1 : 0;
        const ends = ended(run.status) - ended(run.previous);
        const fails = (run.status === 'failed' ? 1 : 0) - (run.previous === 'failed' ? 1 : 0);
        if (seen === 0 && ends === 0 && fails === 0) return progress;
        const { nodes } = current;
        return counted({ ...progress.steps, [event.step]: { ...current, nodes: { done: nodes.done + ends, failed: nodes.failed + fails, total: nodes.total + seen } } });
      }
      if (run.type === 'started' && current.executionId !== run.executionId) {
        return counted({ ...progress.steps, [event.step]: { state: 'running', executionId: run.executionId, nodes: NO_NODES } });
      }
      if (run.type === 'finished' && current.state !== run.result.status) {
        return counted({ ...progress.steps, [event.step]: { ...current, state: run.result.status } });
      }
      return progress;
    }
    case 'finished': {
      const steps: Record<string, StepProgress> = { ...progress.steps };
      for (const [name, outcome] of Object.entries<StepOutcome<string>>(event.outcomes)) {
        const current = steps[name] ?? { state: 'waiting', nodes: NO_NODES };
        steps[name] = { ...current, state: stateOfOutcome(outcome) };
      }
      return counted(steps);
    }
    case 'detached':
      return progress;
    default:
      return event satisfies never;
  }
}
