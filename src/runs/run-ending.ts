import type { RunEnding, RunResult } from '../domain/model.js';
import type { FinishedEvent } from './events.js';

/** A run handle stopped the execution: `by` what, and whether a status had already shown it ended. */
export interface RunStop {
  readonly by: Extract<RunEnding, 'aborted' | 'timeout'>;
  readonly afterEnd: boolean;
}

/**
 * The `finished` event as this client saw the end: an execution that failed after our abort was
 * aborted (service.md §3.5: the service has no aborted status, it reads `failed`). One that had ended
 * before the stop, or finished anyway, keeps its own ending.
 */
export function stoppedEnding(stop: RunStop | undefined, event: FinishedEvent): FinishedEvent {
  if (stop === undefined || stop.afterEnd || event.result.status !== 'failed') return event;
  return { ...event, result: { ...event.result, endedBy: stop.by } };
}

/**
 * The result of a run stopped before its start was sent: no execution exists, so it has no id
 * (`executionId: ''`), no nodes and no output.
 */
export function unstartedResult(canvasId: string, endedBy: RunEnding): RunResult {
  return { executionId: '', canvasId, status: 'failed', endedBy, nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] };
}
