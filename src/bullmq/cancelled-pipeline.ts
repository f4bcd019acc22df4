import type { ExecutionsApi } from '../http/calls.js';
import type { CheckpointStore, StoredPipeline } from '../pipeline/checkpoint-store.js';
import { cancelledResult, type PipelineResult } from './pipeline-result.js';

/**
 * Ends a pipeline that was cancelled while no worker followed it (still queued, or handed back by
 * a worker that detached or died): nothing is started, and every execution still recorded
 * `running` is aborted, then recorded `aborted` under this worker's claim. A crash in between leaves
 * it `running` for the next worker to abort again — harmless, an abort of a failed execution succeeds
 * silently (service.md §3.5) — so an execution is never left running for want of an abort.
 */
export async function endCancelledPipeline(
  executions: Pick<ExecutionsApi, 'abort'>,
  store: CheckpointStore,
  storedId: string,
  stored: StoredPipeline,
  pipelineId: string,
  stepNames: readonly string[],
): Promise<PipelineResult> {
  const token = await store.claim(storedId);
  const steps = stored.checkpoint.steps;
  await Promise.all(
    Object.entries(steps).map(async ([step, entry]) => {
      if (entry?.status !== 'running' || entry.executionId === undefined) return;
      await executions.abort(entry.executionId);
      await store.transition(storedId, step, entry, { ...entry, status: 'aborted' }, token);
    }),
  );
  return cancelledResult(pipelineId, stepNames, stored.checkpoint);
}
