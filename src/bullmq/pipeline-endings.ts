import type { Redis } from 'ioredis';
import { type Queue, QueueEvents } from 'bullmq';
import type { PipelineJobData } from './pipeline-job.js';
import { PIPELINE_QUEUE_NAME } from './pipeline-job.js';
import type { PipelineResult } from './pipeline-result.js';

/** How a pipeline job ended, whichever worker ran it. */
export type PipelineEnding = { readonly type: 'completed'; readonly result: PipelineResult } | { readonly type: 'failed'; readonly reason: string };

/** The ends of pipeline jobs as they happen, for anyone in this process who follows a pipeline. */
export interface PipelineEndings {
  /**
   * Calls `listener` once with the pipeline's end, also when it ended before, or `lost` when the
   * events could not be read; the function returned stops.
   */
  follow(pipelineId: string, listener: (ending: PipelineEnding) => void, lost: (error: unknown) => void): () => void;
  close(): Promise<void>;
}

/**
 * One BullMQ `QueueEvents` per queue object, opened on the first follower (it holds a blocking
 * connection). It reads the events stream from the id that was last when it opened: from `$`,
 * QueueEvents would lose what is written between two of its reads while the stream is quiet. A
 * follower listens first and then reads the job's state, so an end comes either way, once.
 */
export function pipelineEndings(queue: Queue<PipelineJobData, PipelineResult>, redis: Redis, prefix: string): PipelineEndings {
  const listeners = new Map<string, Set<(ending: PipelineEnding) => void>>();
  let opened: Promise<QueueEvents> | undefined;
  let closed = false;
  const notify = (pipelineId: string, ending: PipelineEnding): void => {
    for (const listener of [...(listeners.get(pipelineId) ?? [])]) listener(ending);
  };
  const open = (): Promise<QueueEvents> => {
    opened ??= (async () => {
      const [last] = await redis.xrevrange(queue.keys['events'] ?? `${prefix}:${PIPELINE_QUEUE_NAME}:events`, '+', '-', 'COUNT', 1);
      const events = new QueueEvents(PIPELINE_QUEUE_NAME, { connection: redis, prefix, lastEventId: last?.[0] ?? '0-0' });
      // Its connection reconnects by itself; a follower's end arrives once it is back.
      events.on('error', () => undefined);
      events.on('completed', ({ jobId, returnvalue }) => {
        notify(jobId, { type: 'completed', result: returnvalue as unknown as PipelineResult });
      });
      events.on('failed', ({ jobId, failedReason }) => {
        notify(jobId, { type: 'failed', reason: failedReason });
      });
      await events.waitUntilReady();
      return events;
    })();
    // A failed opening is tried again by the next follower.
    opened.catch(() => {
      opened = undefined;
    });
    return opened;
  };

  const endedAlready = async (pipelineId: string): Promise<PipelineEnding | undefined> => {
    const state = await queue.getJobState(pipelineId);
    if (state !== 'completed' && state !== 'failed') return undefined;
    const job = await queue.getJob(pipelineId);
    if (job === undefined) return undefined;
    return state === 'completed' ? { type: 'completed', result: job.returnvalue } : { type: 'failed', reason: job.failedReason };
  };

  return {
    follow: (pipelineId, listener, lost) => {
      let done = false;
      const once = (ending: PipelineEnding): void => {
        if (done) return;
        done = true;
        stop();
        listener(ending);
      };
      const own = listeners.get(pipelineId) ?? new Set();
      own.add(once);
      listeners.set(pipelineId, own);
      const stop = (): void => {
        own.delete(once);
        if (own.size === 0 && listeners.get(pipelineId) === own) listeners.delete(pipelineId);
      };
      void open()
        .then(() => (done ? undefined : endedAlready(pipelineId)))
        .then((ending) => {
          if (ending !== undefined) once(ending);
        })
        .catch((error: unknown) => {
          if (done) return;
          done = true;
          stop();
          lost(error);
        });
      return () => {
        done = true;
        stop();
      };
    },
    close: async () => {
      if (closed) return;
      closed = true;
      listeners.clear();
      if (opened !== undefined) await (await opened.catch(() => undefined))?.close();
    },
  };
}
