import type { PipelineEvent } from '../pipeline/pipeline-events.js';
import { jobProgressAfter, type PipelineJobProgress } from './pipeline-job-progress.js';

/** What the reporter needs of a BullMQ job. */
interface ProgressTarget {
  updateProgress(progress: PipelineJobProgress): Promise<void>;
}

/** Tells a job's progress to BullMQ as a pipeline's events change it. */
export interface JobProgressReporter {
  event(event: PipelineEvent<string>): void;
  /** Resolves once the latest progress is written (or its write failed and was told). */
  settled(): Promise<void>;
}

/**
 * Writes `initial` at once, then the progress after each event that changes it: one write at a time,
 * and the latest progress after it, so a burst of node events costs one or two writes, never a queue
 * of stale ones. A failed write (Redis away) is told to `onError` and does not stop the pipeline.
 */
export function reportJobProgress(job: ProgressTarget, initial: PipelineJobProgress, onError: (error: unknown) => void): JobProgressReporter {
  let current = initial;
  let written: PipelineJobProgress | undefined;
  let writing: Promise<void> | undefined;
  const pump = async (): Promise<void> => {
    while (written !== current) {
      const next = current;
      try {
        await job.updateProgress(next);
      } catch (error) {
        onError(error);
      }
      written = next;
    }
    // Cleared in the same turn as the last check: an event after it starts a new pump.
    writing = undefined;
  };
  const kick = (): void => {
    writing ??= pump();
  };
  kick();
  return {
    event: (event) => {
      const next = jobProgressAfter(current, event);
      if (next === current) return;
      current = next;
      kick();
    },
    settled: async () => {
      while (writing !== undefined) await writing;
    },
  };
}
