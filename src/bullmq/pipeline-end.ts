import type { Observable } from 'rxjs';
import type { PipelineCheckpoint } from '../pipeline/pipeline-checkpoint.js';
import type { PipelineEvent, StepOutcome } from '../pipeline/pipeline-events.js';

/** How one worker's run of a pipeline ended: to its end (every outcome, the last checkpoint), or left to another. */
export type PipelineEnd =
  | { readonly type: 'finished'; readonly outcomes: Readonly<Record<string, StepOutcome<string>>>; readonly checkpoint: PipelineCheckpoint }
  | { readonly type: 'detached' };

/**
 * Follows a pipeline to its last event. A pipeline whose step failed errors after `finished`: that
 * is an end like any other here; an error before it (the store failed, a definition that is not a
 * DAG) rejects. `resumed` is the checkpoint it starts from (a step in doubt fails with no checkpoint
 * event of its own).
 */
export function pipelineEnd(pipeline: Observable<PipelineEvent<string>>, resumed: PipelineCheckpoint): Promise<PipelineEnd> {
  return new Promise((resolve, reject) => {
    let checkpoint = resumed;
    let end: PipelineEnd | undefined;
    const settle = (error: unknown): void => {
      if (end === undefined) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve(end);
    };
    pipeline.subscribe({
      next: (event) => {
        switch (event.type) {
          case 'checkpoint':
            checkpoint = event.checkpoint;
            break;
          case 'finished':
            end = { type: 'finished', outcomes: event.outcomes, checkpoint };
            break;
          case 'detached':
            end = { type: 'detached' };
            break;
          case 'step':
            break;
          default: {
            const unknown: never = event;
            reject(new Error(`unknown pipeline event ${JSON.stringify(unknown)}`));
          }
        }
      },
      error: settle,
      complete: () => {
        settle(new Error('the pipeline completed without finished or detached'));
      },
    });
  });
}
