import type { Workflow, WorkflowNode } from '../workflows/workflow.js';
import { isTaskNode } from '../workflows/workflow.js';
import {
  ABORTED_ERROR_MESSAGE,
  CREDIT_ERROR_MESSAGE,
  FINISHED_ERROR_MESSAGE,
  NODE_TIMEOUT_ERROR_MESSAGE,
  WORKFLOW_TIMEOUT_ERROR_MESSAGE,
  failedErrorMessage,
} from './error-messages.js';
import { EXECUTION_TIMEOUT_MS, STATUS_TICK_MS } from './timing.js';

/**
 * What becomes of one node over the life of an execution. Scripted durations make the whole run
 * deterministic, so the engine computes it once: status at any instant is then a pure function of
 * time (see `snapshot.ts`), and an accelerated or manual clock needs no timers at all.
 */
export type NodeFate =
  /** service.md §3.4: downstream of a failure a node stays `init` for ever. */
  | { readonly outcome: 'blocked' }
  | {
      readonly outcome: 'finish' | 'failed';
      /** Absent for a node failed by abort or timeout before it started. */
      readonly startAt: number | undefined;
      readonly endAt: number;
      /** Absent for no-work nodes. */
      readonly errorMessage: string | undefined;
    };

/** The fate of every node and of the execution itself. */
export interface Timeline {
  readonly createdAt: number;
  readonly fates: ReadonlyMap<string, NodeFate>;
  /** When the execution status turns terminal. */
  readonly settledAt: number;
  readonly outcome: 'finish' | 'failed';
  readonly abortedAt: number | undefined;
}

/** Plans an execution of `workflow` created at `createdAt` (emulator ms), timeouts included. */
export function planTimeline(workflow: Workflow, createdAt: number): Timeline {
  const fates = new Map<string, NodeFate>();
  for (const node of workflow.nodes) fates.set(node.id, fateOf(node, createdAt, fates));

  const natural = settle(createdAt, fates);
  const timeline: Timeline = { createdAt, fates, ...natural, abortedAt: undefined };
  const deadline = createdAt + EXECUTION_TIMEOUT_MS;
  // service.md §3.6: a run still going after 30 minutes fails as a whole.
  return natural.settledAt > deadline ? cut(timeline, deadline, WORKFLOW_TIMEOUT_ERROR_MESSAGE) : timeline;
}

/**
 * Aborts at `at`. service.md §3.5: every unfinished node, `init` included, fails with
 * `Workflow aborted by user` and the execution fails; an execution already terminal is left alone.
 */
export function abortTimeline(timeline: Timeline, at: number): Timeline {
  if (at >= timeline.settledAt) return timeline;
  return { ...cut(timeline, at, ABORTED_ERROR_MESSAGE), abortedAt: at };
}

function fateOf(node: WorkflowNode, createdAt: number, decided: ReadonlyMap<string, NodeFate>): NodeFate {
  // service.md §3.2: nodes with no work are `finish` from the start.
  if (!isTaskNode(node)) return { outcome: 'finish', startAt: createdAt, endAt: createdAt, errorMessage: undefined };
  let startAt = createdAt;
  for (const parentId of node.parents) {
    const parent = decided.get(parentId);
    // service.md §3.2, §3.4: a node starts only when all its parents are `finish` (here at once, not on the next tick).
    if (parent === undefined || parent.outcome !== 'finish') return { outcome: 'blocked' };
    startAt = Math.max(startAt, parent.endAt);
  }
  const scripted = scriptedEnd(node, startAt);
  if (scripted.endAt - startAt > EXECUTION_TIMEOUT_MS) {
    return { outcome: 'failed', startAt, endAt: startAt + EXECUTION_TIMEOUT_MS, errorMessage: NODE_TIMEOUT_ERROR_MESSAGE };
  }
  return { ...scripted, startAt };
}

function scriptedEnd(node: WorkflowNode, startAt: number): { outcome: 'finish' | 'failed'; endAt: number; errorMessage: string } {
  const failure = node.failure;
  if (failure === undefined) return { outcome: 'finish', endAt: startAt + node.durationMs, errorMessage: FINISHED_ERROR_MESSAGE };
  switch (failure.kind) {
    case 'credit':
      return { outcome: 'failed', endAt: startAt, errorMessage: CREDIT_ERROR_MESSAGE };
    case 'error':
      return { outcome: 'failed', endAt: startAt + failure.atMs, errorMessage: failedErrorMessage(failure.errors) };
  }
}

/** service.md §3.3: the status is derived on a tick; failure wins at the first tick after it. */
function settle(createdAt: number, fates: ReadonlyMap<string, NodeFate>): Pick<Timeline, 'settledAt' | 'outcome'> {
  let firstFailure = Number.POSITIVE_INFINITY;
  let lastFinish = createdAt;
  for (const fate of fates.values()) {
    if (fate.outcome === 'failed') firstFailure = Math.min(firstFailure, fate.endAt);
    if (fate.outcome === 'finish') lastFinish = Math.max(lastFinish, fate.endAt);
  }
  if (firstFailure !== Number.POSITIVE_INFINITY) return { settledAt: tickAtOrAfter(createdAt, firstFailure), outcome: 'failed' };
  // service.md §3.1: with nothing to do (an empty workflow) the run is `finish` at once.
  if (lastFinish === createdAt) return { settledAt: createdAt, outcome: 'finish' };
  return { settledAt: tickAtOrAfter(createdAt, lastFinish), outcome: 'finish' };
}

function tickAtOrAfter(createdAt: number, at: number): number {
  const ticks = Math.max(1, Math.ceil((at - createdAt) / STATUS_TICK_MS));
  return createdAt + ticks * STATUS_TICK_MS;
}

/** Fails, at `at`, every node not yet ended, and settles the execution as failed at that instant. */
function cut(timeline: Timeline, at: number, errorMessage: string): Timeline {
  const fates = new Map<string, NodeFate>();
  for (const [id, fate] of timeline.fates) {
    const ended = fate.outcome !== 'blocked' && fate.endAt <= at;
    if (ended) {
      fates.set(id, fate);
      continue;
    }
    const startAt = fate.outcome !== 'blocked' && fate.startAt !== undefined && fate.startAt < at ? fate.startAt : undefined;
    fates.set(id, { outcome: 'failed', startAt, endAt: at, errorMessage });
  }
  return { ...timeline, fates, settledAt: at, outcome: 'failed' };
}
