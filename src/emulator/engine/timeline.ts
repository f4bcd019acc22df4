import type { Workflow, WorkflowNode } from '../workflows/workflow.js';
import { isContentNode, isTaskNode } from '../workflows/workflow.js';
import {
  ABORTED_ERROR_MESSAGE,
  CREDIT_ERROR_MESSAGE,
  FINISHED_ERROR_MESSAGE,
  NODE_TIMEOUT_ERROR_MESSAGE,
  failedErrorMessage,
  workflowTimeoutErrorMessage,
} from './error-messages.js';
import { EXECUTION_TIMEOUT_MS, POLL_TICK_MS } from './timing.js';

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

/**
 * How an execution moves on.
 * `poll-tick` — the service (service.md §3.2, §3.3, §3.6): everything but a root node's start
 *   happens on its poll tick. A node starts on the first tick after all its parents finished; a
 *   content node turns `finish` on the first tick after a task parent finished; once the execution
 *   has failed, the ticks stop, and nothing starts any more; the 30-minute timeout strikes on the
 *   first tick past it, and no node times out on its own.
 * `instant` — as the spec reads: a node starts the instant its parents finish, content nodes are
 *   `finish` from the start, the execution and each node time out at 30 minutes exactly. The status
 *   is derived on the tick all the same (a node that ends on a tick is seen by that tick).
 */
export type Pacing = 'poll-tick' | 'instant';

/** Plans an execution of `workflow` created at `createdAt` (emulator ms), timeouts included. */
export function planTimeline(workflow: Workflow, createdAt: number, pacing: Pacing): Timeline {
  return pacing === 'poll-tick' ? planOnTicks(workflow, createdAt) : planInstant(workflow, createdAt);
}

/**
 * Aborts at `at`. service.md §3.5: every unfinished node, `init` included, fails with
 * `Workflow aborted by user` and the execution fails; an execution already terminal is left alone.
 */
export function abortTimeline(timeline: Timeline, at: number): Timeline {
  if (at >= timeline.settledAt) return timeline;
  return { ...cut(timeline, at, ABORTED_ERROR_MESSAGE, 'at-or-before'), abortedAt: at };
}

// ——— poll-tick: the service ———

function planOnTicks(workflow: Workflow, createdAt: number): Timeline {
  // service.md §3.3: the service stops polling once the execution has failed, so nothing starts after
  // the tick that found the failure. That tick depends only on nodes started before it: a first plan
  // with no end to the ticks finds it, a second one stops the ticks there.
  const unbounded = fatesOnTicks(workflow, createdAt, Number.POSITIVE_INFINITY);
  const failedAt = firstFailureSeen(createdAt, unbounded);
  const fates = failedAt === undefined ? unbounded : fatesOnTicks(workflow, createdAt, failedAt);
  const natural = settleOnTicks(workflow, createdAt, fates, failedAt);
  // service.md §3.6: a tick checks the execution's age before anything else, so the first tick past
  // 30 minutes fails it, with its real age, unless an earlier tick settled it.
  const timeoutTick = nextTick(createdAt, createdAt + EXECUTION_TIMEOUT_MS);
  const timeline: Timeline = { createdAt, fates, ...natural, abortedAt: undefined };
  if (natural.settledAt < timeoutTick) return timeline;
  return cut(timeline, timeoutTick, workflowTimeoutErrorMessage(timeoutTick - createdAt), 'before');
}

/** The fates of the nodes when ticks stop after `lastTick` (nothing starts or turns `finish` on a later one). */
function fatesOnTicks(workflow: Workflow, createdAt: number, lastTick: number): Map<string, NodeFate> {
  const byId = new Map(workflow.nodes.map((node) => [node.id, node]));
  const fates = new Map<string, NodeFate>();
  for (const node of workflow.nodes) {
    const parents = node.parents.map((id) => ({ node: byId.get(id), fate: fates.get(id) ?? BLOCKED }));
    fates.set(node.id, fateOnTicks(node, parents, createdAt, lastTick));
  }
  return fates;
}

const BLOCKED: NodeFate = { outcome: 'blocked' };

interface ParentFate {
  readonly node: WorkflowNode | undefined;
  readonly fate: NodeFate;
}

function fateOnTicks(node: WorkflowNode, parents: readonly ParentFate[], createdAt: number, lastTick: number): NodeFate {
  const content = isContentNode(node);
  // service.md §3.2: start, memo, resource and group nodes are `finish` from the start; the run
  // itself starts the nodes without parents, and a content node among them finishes at once.
  if ((!isTaskNode(node) && !content) || (content && parents.length === 0)) return finishedAt(createdAt);
  if (parents.length === 0) return { ...scriptedEnd(node, createdAt), startAt: createdAt };
  if (content) {
    // service.md §3.2: a tick finishes the content children of every task it finds finished.
    const taskEnds = parents.flatMap(({ node: parent, fate }) => (parent !== undefined && isTaskNode(parent) && fate.outcome === 'finish' ? [fate.endAt] : []));
    if (taskEnds.length === 0) return BLOCKED;
    const at = nextTick(createdAt, Math.min(...taskEnds));
    return at > lastTick ? BLOCKED : finishedAt(at);
  }
  let latest = createdAt;
  for (const { fate } of parents) {
    // service.md §3.2, §3.4: a node starts only when all its parents are `finish`.
    if (fate.outcome !== 'finish') return BLOCKED;
    latest = Math.max(latest, fate.endAt);
  }
  const startAt = nextTick(createdAt, latest);
  return startAt > lastTick ? BLOCKED : { ...scriptedEnd(node, startAt), startAt };
}

const finishedAt = (at: number): NodeFate => ({ outcome: 'finish', startAt: at, endAt: at, errorMessage: undefined });

/** service.md §3.3: the tick that first finds a failed node; undefined when none fails. */
function firstFailureSeen(createdAt: number, fates: ReadonlyMap<string, NodeFate>): number | undefined {
  let first: number | undefined;
  for (const fate of fates.values()) {
    if (fate.outcome === 'failed') first = Math.min(first ?? Number.POSITIVE_INFINITY, nextTick(createdAt, fate.endAt));
  }
  return first;
}

/**
 * service.md §3.3: a tick reads the nodes as they were when it began: failed if one has failed,
 * finish when none is pending or executing. A node left `init` with no failure (a content node
 * below no task) keeps the execution going until the timeout.
 */
function settleOnTicks(workflow: Workflow, createdAt: number, fates: ReadonlyMap<string, NodeFate>, failedAt: number | undefined): Pick<Timeline, 'settledAt' | 'outcome'> {
  if (failedAt !== undefined) return { settledAt: failedAt, outcome: 'failed' };
  // service.md §3.1: with no nodes at all the run is `finish` at once.
  if (workflow.nodes.length === 0) return { settledAt: createdAt, outcome: 'finish' };
  let lastEnd = createdAt;
  for (const fate of fates.values()) {
    if (fate.outcome !== 'finish') return { settledAt: Number.POSITIVE_INFINITY, outcome: 'finish' };
    lastEnd = Math.max(lastEnd, fate.endAt);
  }
  return { settledAt: nextTick(createdAt, lastEnd), outcome: 'finish' };
}

/** The first poll tick strictly after `at`: what happens at an instant is seen by the next tick. */
function nextTick(createdAt: number, at: number): number {
  const ticks = Math.max(1, Math.floor((at - createdAt) / POLL_TICK_MS) + 1);
  return createdAt + ticks * POLL_TICK_MS;
}

// ——— instant: as the spec reads ———

function planInstant(workflow: Workflow, createdAt: number): Timeline {
  const fates = new Map<string, NodeFate>();
  for (const node of workflow.nodes) fates.set(node.id, fateInstant(node, createdAt, fates));

  const natural = settleInstant(createdAt, fates);
  const timeline: Timeline = { createdAt, fates, ...natural, abortedAt: undefined };
  const deadline = createdAt + EXECUTION_TIMEOUT_MS;
  // service.md §3.6: a run still going after 30 minutes fails as a whole.
  return natural.settledAt > deadline ? cut(timeline, deadline, workflowTimeoutErrorMessage(EXECUTION_TIMEOUT_MS), 'at-or-before') : timeline;
}

function fateInstant(node: WorkflowNode, createdAt: number, decided: ReadonlyMap<string, NodeFate>): NodeFate {
  // The spec: nodes with no work are `finish` from the start.
  if (!isTaskNode(node)) return finishedAt(createdAt);
  let startAt = createdAt;
  for (const parentId of node.parents) {
    const parent = decided.get(parentId);
    // service.md §3.2, §3.4: a node starts only when all its parents are `finish`.
    if (parent === undefined || parent.outcome !== 'finish') return BLOCKED;
    startAt = Math.max(startAt, parent.endAt);
  }
  const scripted = scriptedEnd(node, startAt);
  if (scripted.endAt - startAt > EXECUTION_TIMEOUT_MS) {
    return { outcome: 'failed', startAt, endAt: startAt + EXECUTION_TIMEOUT_MS, errorMessage: NODE_TIMEOUT_ERROR_MESSAGE };
  }
  return { ...scripted, startAt };
}

/** service.md §3.3: the status is derived on a tick; failure wins at the first tick at or after it. */
function settleInstant(createdAt: number, fates: ReadonlyMap<string, NodeFate>): Pick<Timeline, 'settledAt' | 'outcome'> {
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
  const ticks = Math.max(1, Math.ceil((at - createdAt) / POLL_TICK_MS));
  return createdAt + ticks * POLL_TICK_MS;
}

// ——— both ———

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

/**
 * Fails, at `at`, every node not yet ended, and settles the execution as failed at that instant.
 * `before`: a node ending at `at` itself has not ended (a poll tick sees what happened before it).
 */
function cut(timeline: Timeline, at: number, errorMessage: string, ended: 'at-or-before' | 'before'): Timeline {
  const fates = new Map<string, NodeFate>();
  for (const [id, fate] of timeline.fates) {
    if (fate.outcome !== 'blocked' && (fate.endAt < at || (ended === 'at-or-before' && fate.endAt === at))) {
      fates.set(id, fate);
      continue;
    }
    const startAt = fate.outcome !== 'blocked' && fate.startAt !== undefined && fate.startAt < at ? fate.startAt : undefined;
    fates.set(id, { outcome: 'failed', startAt, endAt: at, errorMessage });
  }
  return { ...timeline, fates, settledAt: at, outcome: 'failed' };
}
