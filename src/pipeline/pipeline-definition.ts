import type { SchedulerLike } from 'rxjs';
import type { RunResult } from '../domain/model.js';
import type { WorkflowArguments, WorkflowInput, Workflows } from '../domain/workflows.js';
import type { RunOptions } from '../runs/run-lifecycle.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { PipelineCheckpoint } from './pipeline-checkpoint.js';
import type { PipelineTelemetryOptions } from './pipeline-telemetry.js';
import type { StepContext } from './step-input.js';

/**
 * The results a step's `input` receives: every step finished so far, its `dependsOn` steps surely.
 *
 * @example
 * ```ts
 * const input = (results: StepResults<'research' | 'brief'>) => ({ variables: { notes: outputText(results.research!) } });
 * ```
 */
export type StepResults<Name extends string> = Readonly<Partial<Record<Name, RunResult>>>;

/**
 * One step of a pipeline: a run of a workflow once its dependencies have finished. `Id` is the step's
 * canvas id: for one of your typed workflows (`Workflows`) its `input` must return that workflow's
 * variables; for any other canvas id (the default, `string`) any variables.
 *
 * @example
 * ```ts
 * const summary: PipelineStep<'research' | 'summary'> = {
 *   canvasId: 'c-summarise', dependsOn: ['research'], retry: 1,
 *   input: (results) => ({ variables: { notes: outputText(results.research!) } }),
 * };
 * ```
 */
export interface PipelineStep<Name extends string, out Id extends string = string> {
  readonly canvasId: Id;
  /** Steps that must finish successfully before this one starts. */
  readonly dependsOn?: readonly Name[];
  /** The run's input, from the results so far; may be async (e.g. `transferFiles`). Default: no variables. */
  readonly input?: (results: StepResults<Name>, context: StepContext) => WorkflowInput<Id> | PromiseLike<WorkflowInput<Id>>;
  /** Re-run the workflow up to this many times when it fails (default 0). */
  readonly retry?: number;
  /** Options of this step's run, over the pipeline's `run` options. `failOnWorkflowError` is always true here. */
  readonly run?: RunOptions;
}

/**
 * The canvas id of each step of a pipeline, by step name: what {@link runPipeline} infers from the
 * steps it is given, so that each step's `input` is checked against its own workflow.
 *
 * @example
 * ```ts
 * const ids: StepCanvasIds<'research' | 'summary'> = { research: 'c-research', summary: 'c-summarise' };
 * ```
 */
export type StepCanvasIds<Name extends string> = { readonly [Step in Name]: string };

/** The typed canvas ids whose workflow has a required variable. */
type InputRequired = { [Id in Extract<keyof Workflows, string>]: undefined extends WorkflowArguments<Id, never>[0] ? never : Id }[Extract<keyof Workflows, string>];

/** A step of a canvas id whose workflow has a required variable must say how to build its input. */
type InputWhenRequired<Name extends string, Id extends string> = Id extends InputRequired ? Required<Pick<PipelineStep<Name, Id>, 'input'>> : unknown;

/**
 * A pipeline: named steps forming a DAG. Given only the step names, its steps take any canvas id and
 * any variables; {@link runPipeline} infers the canvas ids (`Ids`) of the steps written in its call
 * and checks each step's input against its typed workflow.
 *
 * @example
 * ```ts
 * const definition: PipelineDefinition<'a' | 'b'> = { steps: { a: { canvasId: 'c-a' }, b: { canvasId: 'c-b', dependsOn: ['a'] } } };
 * ```
 */
export interface PipelineDefinition<Name extends string, Ids extends StepCanvasIds<Name> = StepCanvasIds<Name>> {
  // Mapped over `Ids` so that a call infers each step's canvas id; the `Record` gives the step names.
  readonly steps: { readonly [Step in keyof Ids]: PipelineStep<NoInfer<Name>, Ids[Step] & string> & InputWhenRequired<NoInfer<Name>, Ids[Step] & string> } & Readonly<Record<Name, unknown>>;
}

/**
 * What happens to independent branches when a step fails (after its retries); its dependants never start.
 * `abort-all`: every running execution is aborted and nothing more starts. `finish-running`: the
 * branches that do not depend on the failed step run on to their end.
 *
 * @example
 * ```ts
 * const policy: StepFailurePolicy = 'finish-running';
 * ```
 */
export type StepFailurePolicy = 'abort-all' | 'finish-running';

/**
 * Options of {@link runPipeline}.
 *
 * @example
 * ```ts
 * runPipeline(client, definition, { onStepFailure: 'finish-running', resume: JSON.parse(saved), run: { timeoutMs: 600_000 } });
 * ```
 */
export interface PipelineOptions {
  /** Default `abort-all`. */
  readonly onStepFailure?: StepFailurePolicy;
  /**
   * A checkpoint of an earlier attempt: steps recorded `running` or `finish` are followed with `watch`
   * instead of being started again; steps recorded `failed` or `aborted`, or not recorded, start anew.
   */
  readonly resume?: PipelineCheckpoint;
  /** Options of every step's run. */
  readonly run?: RunOptions;
  /**
   * What to do with a step the checkpoint records `starting`: its start may have reached the service
   * but no answer was recorded (the process died), so its execution may exist (service.md §2.2, §3.8).
   * `'fail'` (default): the step fails with `StepInDoubtError`, naming it and when the start was
   * attempted; nothing is started twice. `'start-again'`: start it once more (attempt + 1).
   */
  readonly inDoubt?: 'fail' | 'start-again';
  /**
   * Aborting this signal leaves the pipeline without aborting anything: nothing more starts, every
   * running step's execution goes on, the last checkpoint is emitted with `detached` and the
   * Observable completes — another process resumes from that checkpoint. Unsubscribing instead
   * cancels: every running execution is aborted once. For a service: SIGTERM → detach; a user's cancel → unsubscribe.
   */
  readonly detach?: AbortSignal;
  /**
   * Keep the checkpoint in a store (any process can resume the pipeline by its id): the pipeline
   * claims the lead (a fencing token), resumes from what the store holds, records every step there by
   * compare-and-set (a step is `starting` in the store before its start leaves) and cancels when
   * anyone calls `store.requestCancel(pipelineId)`. When another process claims the pipeline, this one
   * detaches.
   */
  readonly checkpoints?: { readonly store: CheckpointStore; readonly pipelineId: string };
  /** The clock of the checkpoint's `attemptedAt` times and of telemetry; the client's `scheduler` in tests. Default real time. */
  readonly scheduler?: SchedulerLike;
  /** What the client's `telemetry` hook is told of the pipeline: its name, its queue job, its parent. */
  readonly telemetry?: PipelineTelemetryOptions;
}
