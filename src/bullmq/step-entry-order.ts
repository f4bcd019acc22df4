import type { StepCheckpoint, StepCheckpointStatus } from '../pipeline/pipeline-checkpoint.js';

/** How far one start of a step has come: it is recorded starting, then running, then ended. */
function progress(status: StepCheckpointStatus): number {
  switch (status) {
    case 'starting':
      return 0;
    case 'running':
      return 1;
    case 'finish':
    case 'failed':
    case 'aborted':
      return 2;
    default: {
      const unknown: never = status;
      return unknown;
    }
  }
}

/**
 * Whether `entry` is a later state of its step than `than`: a later start (retry, start again), or
 * the same start further on. A step's changes reach a follower through pub/sub and a snapshot read,
 * which can cross: the follower keeps only what moves the step forward.
 */
export function isLaterEntry(entry: StepCheckpoint, than: StepCheckpoint | undefined): boolean {
  if (than === undefined) return true;
  const attempt = entry.attempt ?? 1;
  const before = than.attempt ?? 1;
  if (attempt !== before) return attempt > before;
  return progress(entry.status) > progress(than.status);
}
