import { Observable } from 'rxjs';
import type { Logger } from '../domain/model.js';
import type { CheckpointStore } from '../pipeline/checkpoint-store.js';
import type { StepCheckpoint } from '../pipeline/pipeline-checkpoint.js';
import { checkpointChannel, parseCheckpointMessage } from '../redis/checkpoint-store.js';
import type { PipelineChannels } from './pipeline-channels.js';
import type { PipelineEndings } from './pipeline-endings.js';
import { PipelineJobFailedError } from './pipeline-job-failed-error.js';
import type { PipelineResult } from './pipeline-result.js';
import { isLaterEntry } from './step-entry-order.js';

/**
 * What any process following a pipeline of the queue sees, discriminated on `type`: a step moved
 * (`starting` before its start leaves, `running` with its execution, then its end; from whichever
 * worker runs it), a cancel was asked for, and last `finished` with the pipeline's result.
 *
 * @example
 * ```ts
 * queue.events$(pipelineId).subscribe((event) => {
 *   if (event.type === 'step') console.log(event.step, event.entry.status, event.entry.executionId);
 *   if (event.type === 'finished') console.log(event.result.status);
 * });
 * ```
 */
export type PipelineQueueEvent =
  | { readonly type: 'step'; readonly pipelineId: string; readonly step: string; readonly entry: StepCheckpoint }
  | { readonly type: 'cancel'; readonly pipelineId: string }
  | { readonly type: 'finished'; readonly pipelineId: string; readonly result: PipelineResult };

/**
 * A pipeline's progress from the store and its end from the queue. The pipeline's channel is
 * subscribed first and its stored steps read once Redis holds the subscription — again after each
 * reconnection — so every change is either in a snapshot or comes after it; a step's state is
 * emitted only when it moves the step forward, so a snapshot and a change that cross arrive in order.
 */
export function pipelineQueueEvents(channels: PipelineChannels, store: CheckpointStore, endings: PipelineEndings, storedId: string, pipelineId: string, logger?: Logger): Observable<PipelineQueueEvent> {
  return new Observable<PipelineQueueEvent>((subscriber) => {
    const latest = new Map<string, StepCheckpoint>();
    let cancelled = false;
    const step = (name: string, entry: StepCheckpoint): void => {
      if (!isLaterEntry(entry, latest.get(name))) return;
      latest.set(name, entry);
      subscriber.next({ type: 'step', pipelineId, step: name, entry });
    };
    const cancel = (): void => {
      if (cancelled) return;
      cancelled = true;
      subscriber.next({ type: 'cancel', pipelineId });
    };
    // Where the steps stand and whether a cancel was asked: every change is in it or heard after it.
    const readStored = (): void => {
      store.load(storedId).then(
        (stored) => {
          if (subscriber.closed || stored === undefined) return;
          for (const [name, entry] of Object.entries(stored.checkpoint.steps)) if (entry !== undefined) step(name, entry);
          if (stored.cancelRequested) cancel();
        },
        (error: unknown) => {
          subscriber.error(error);
        },
      );
    };
    const changes = channels.listen(
      checkpointChannel(storedId),
      (message) => {
        const event = parseCheckpointMessage(storedId, message);
        // Anyone can publish on a channel: what is not a change of this pipeline is dropped, and told.
        if (event === undefined) logger?.warn('pipeline queue: dropped a message that is not a change of this pipeline', { pipelineId });
        else if (event.type === 'cancel') cancel();
        else step(event.step, event.entry);
      },
      // What was published while the connection was away is read from the store.
      readStored,
    );
    changes.subscribed.then(readStored, (error: unknown) => {
      subscriber.error(error);
    });
    const stopFollowing = endings.follow(
      pipelineId,
      (ending) => {
        if (ending.type === 'failed') {
          subscriber.error(new PipelineJobFailedError(pipelineId, ending.reason));
          return;
        }
        subscriber.next({ type: 'finished', pipelineId, result: ending.result });
        subscriber.complete();
      },
      (error) => {
        subscriber.error(error);
      },
    );
    return () => {
      changes.stop();
      stopFollowing();
    };
  });
}
