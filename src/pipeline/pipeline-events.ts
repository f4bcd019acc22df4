import type { RunResult } from '../domain/model.js';
import type { RunEvent } from '../runs/events.js';
import type { PipelineCheckpoint } from './pipeline-checkpoint.js';

/**
 * An event of one step's run, tagged with the step.
 *
 * @example
 * ```ts
 * pipeline$.pipe(filter((e) => e.type === 'step' && e.event.type === 'message')).subscribe((e) => console.log(e.step));
 * ```
 */
export interface StepEvent<Name extends string> {
  readonly type: 'step';
  readonly step: Name;
  readonly event: RunEvent;
}

/**
 * The checkpoint changed: a step started (or re-started on retry), finished, failed or was aborted.
 *
 * @example
 * ```ts
 * pipeline$.subscribe((e) => { if (e.type === 'checkpoint') writeFileSync('checkpoint.json', JSON.stringify(e.checkpoint)); });
 * ```
 */
export interface CheckpointEvent<Name extends string> {
  readonly type: 'checkpoint';
  readonly checkpoint: PipelineCheckpoint<Name>;
}

/**
 * How a step ended. `failed`: its workflow failed (`WorkflowFailedError` naming the step) or its run
 * or input errored otherwise. `aborted`: running when another step failed under `abort-all`.
 * `skipped`: never started, because `blockedBy` failed (or was skipped) or the pipeline stopped.
 *
 * @example
 * ```ts
 * const outcome: StepOutcome<'a' | 'b'> = { status: 'skipped', blockedBy: 'a' };
 * ```
 */
export type StepOutcome<Name extends string> =
  | { readonly status: 'finish'; readonly result: RunResult }
  | { readonly status: 'failed'; readonly error: unknown }
  | { readonly status: 'aborted' }
  /** The pipeline was left (`detach`) while the step ran or waited: its execution goes on unobserved. */
  | { readonly status: 'detached' }
  | { readonly status: 'skipped'; readonly blockedBy: Name };

/**
 * The last event: every step's outcome, in declaration order. The pipeline then completes, or errors
 * with the first failed step's error.
 *
 * @example
 * ```ts
 * const last = await lastValueFrom(pipeline$.pipe(filter((e) => e.type === 'finished')));
 * ```
 */
export interface PipelineFinishedEvent<Name extends string> {
  readonly type: 'finished';
  readonly outcomes: Readonly<Record<Name, StepOutcome<Name>>>;
}

/**
 * Everything a pipeline tells its subscribers, discriminated on `type`.
 *
 * @example
 * ```ts
 * runPipeline(client, definition).subscribe((event) => {
 *   switch (event.type) {
 *     case 'step': console.log(event.step, event.event.type); break;
 *     case 'checkpoint': save(event.checkpoint); break;
 *     case 'finished': console.log(event.outcomes); break;
 *   }
 * });
 * ```
 */
/**
 * The pipeline was left without aborting anything (`detach`, or another process took the lead): the
 * last checkpoint, for whoever resumes it. Always the last event; the Observable then completes.
 *
 * @example
 * ```ts
 * if (event.type === 'detached') await saveCheckpoint(event.checkpoint);
 * ```
 */
export interface PipelineDetachedEvent<Name extends string> {
  readonly type: 'detached';
  readonly checkpoint: PipelineCheckpoint<Name>;
}

export type PipelineEvent<Name extends string> = StepEvent<Name> | CheckpointEvent<Name> | PipelineFinishedEvent<Name> | PipelineDetachedEvent<Name>;
