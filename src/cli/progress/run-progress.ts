import type { ExecutionStatus, NodeError, NodeState, NodeStatus, OutputFile, OutputNode, RunEvent, RunResult, RunState } from '../../index.js';
import { isNodeDone, type NodeTimes, seeNodeEvent, serviceInstant } from '../../domain/node-times.js';

/**
 * A node as the progress display shows it: status, when it started and ended, last text. Every time
 * is on the display's clock (wall-clock milliseconds), the one its run's elapsed time is read on, so
 * that a node never seems to have run longer than its run.
 */
export interface NodeProgress {
  readonly nodeId: string;
  readonly title: string;
  readonly status: NodeStatus;
  /**
   * When the node started and ended, on the display's clock: as the display saw it (the run's rule,
   * `seeNodeEvent`), or the service's times for one whose start it did not see. A node first seen done
   * has an end and no start, and so no elapsed time.
   */
  readonly times?: NodeTimes;
  readonly error?: NodeError;
  /** The node's latest line of text, for the live display. */
  readonly lastLine: string;
  /**
   * Whether the node is work (a task node, service.md §4.2) rather than a start, memo or other node with
   * none, which is `finish` from the start (§3.2): seen waiting or running, with text, or in the output.
   */
  readonly task: boolean;
}

/** A run as the progress display shows it. */
export interface RunProgress {
  /** When the execution was created, when known and not ahead of the display's clock; else when the display began. */
  readonly startedAtMs: number;
  readonly executionId?: string;
  readonly canvasId?: string;
  readonly status?: ExecutionStatus;
  readonly nodes: readonly NodeProgress[];
  readonly files: readonly OutputFile[];
  readonly result?: RunResult;
  /** While the run reads through an outage: since when (display clock), the failed attempts, the last failure. */
  readonly reconnecting?: { readonly sinceMs: number; readonly attempts: number; readonly error: string };
}

/**
 * A service timestamp (ISO 8601) as a point on the display's clock, when it is one: a time ahead of
 * `nowMs` (a skewed or accelerated service clock) is not believed.
 */
function pastInstant(timestamp: string | undefined, nowMs: number): number | undefined {
  const ms = serviceInstant(timestamp);
  return ms !== undefined && ms <= nowMs ? ms : undefined;
}

/**
 * The progress of a run before its first event. `createdAt` is the execution's creation time from the
 * service (service.md §4.1), when it existed before the display (`watch`): its time counts from then.
 */
export function initialProgress(nowMs: number, createdAt?: string): RunProgress {
  return { startedAtMs: pastInstant(createdAt, nowMs) ?? nowMs, nodes: [], files: [] };
}

function lastLineOf(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return lines.at(-1) ?? '';
}

function nextNode(known: NodeProgress | undefined, event: Extract<RunEvent, { type: 'node' }>, nowMs: number): NodeProgress {
  const times = seeNodeEvent(known?.times, event, nowMs);
  const error = event.error ?? known?.error;
  return {
    ...known,
    nodeId: event.nodeId,
    title: event.title ?? known?.title ?? event.nodeId,
    status: event.status,
    lastLine: known?.lastLine ?? '',
    task: (known?.task ?? false) || !isNodeDone(event.status),
    ...(times === undefined ? {} : { times }),
    ...(error === undefined ? {} : { error }),
  };
}

function upsert(nodes: readonly NodeProgress[], nodeId: string, update: (known: NodeProgress | undefined) => NodeProgress): readonly NodeProgress[] {
  const known = nodes.find((node) => node.nodeId === nodeId);
  return known === undefined ? [...nodes, update(undefined)] : nodes.map((node) => (node === known ? update(known) : node));
}

/** A node as a run's state shows it, its elapsed time ending now (a done node's too, as the display sees it now). */
function nodeOfState(node: NodeState, nowMs: number): NodeProgress {
  const startedAt = node.elapsedMs === undefined ? undefined : nowMs - node.elapsedMs;
  return {
    nodeId: node.nodeId,
    title: node.title ?? node.nodeId,
    status: node.status,
    lastLine: lastLineOf(node.text),
    task: node.task,
    ...(startedAt === undefined ? {} : { times: isNodeDone(node.status) ? { startedAt, endedAt: nowMs } : { startedAt } }),
    ...(node.error === undefined ? {} : { error: node.error }),
  };
}

/** The progress a run's state stands for (a `snapshot` event), the display's start kept. */
function progressOfState(progress: RunProgress, state: RunState, nowMs: number): RunProgress {
  const { executionId, canvasId, status, result, reconnecting } = state;
  return {
    startedAtMs: progress.startedAtMs,
    ...(executionId === undefined ? {} : { executionId }),
    ...(canvasId === undefined ? {} : { canvasId }),
    ...(status === undefined ? {} : { status }),
    nodes: state.nodes.map((node) => nodeOfState(node, nowMs)),
    files: state.files,
    ...(result === undefined ? {} : { result }),
    ...(reconnecting === undefined ? {} : { reconnecting: { sinceMs: nowMs - (state.elapsedMs - reconnecting.since), attempts: reconnecting.attempts, error: reconnecting.error } }),
  };
}

/** The progress with no outage going on. */
function connected(progress: RunProgress): RunProgress {
  const { reconnecting, ...rest } = progress;
  return reconnecting === undefined ? progress : rest;
}

/**
 * One event folded into the display's view of the run. `nowMs` is the display's clock: node times are
 * what the user saw, not the server's.
 */
export function advanceProgress(progress: RunProgress, event: RunEvent, nowMs: number): RunProgress {
  switch (event.type) {
    case 'started':
      return { ...progress, executionId: event.executionId, status: event.status, ...(event.canvasId === undefined ? {} : { canvasId: event.canvasId }) };
    case 'snapshot':
      return progressOfState(progress, event.state, nowMs);
    case 'status':
      return { ...progress, status: event.status };
    case 'node':
      return { ...progress, nodes: upsert(progress.nodes, event.nodeId, (known) => nextNode(known, event, nowMs)) };
    case 'message':
      return {
        ...progress,
        nodes: upsert(progress.nodes, event.nodeId, (known) => ({
          nodeId: event.nodeId,
          title: event.nodeId,
          status: 'unknown',
          ...known,
          task: true,
          lastLine: lastLineOf(event.content) === '' ? (known?.lastLine ?? '') : lastLineOf(event.content),
        })),
      };
    case 'file':
      return { ...progress, files: [...progress.files, event.file] };
    case 'connection': {
      if (event.reconnecting === undefined) return connected(progress);
      const sinceMs = progress.reconnecting?.sinceMs ?? nowMs - event.reconnecting.failingForMs;
      return { ...progress, reconnecting: { sinceMs, attempts: event.reconnecting.attempts, error: event.reconnecting.error } };
    }
    case 'finished':
      return { ...connected(withOutputNodes(progress, event.result.output)), status: event.result.status, result: event.result, files: event.result.files };
    default:
      return event satisfies never;
  }
}

/**
 * The output's task nodes (service.md §4.2) marked as work: `watch` reads them when it attaches, and
 * every run has them at its end. The output lists every task node and only those, so a node it does
 * not list is no work, though the display took it for some: a content node reads `init` before its
 * task parent is done, and for ever below a failed one (§3.2, §3.4). What the display saw itself stays;
 * the service's start and end times fill in only a node whose start it did not see (it ran before
 * `watch` attached, or between two polls), read as points on the display's clock and only when not
 * ahead of it.
 */
export function withOutputNodes(progress: RunProgress, output: readonly OutputNode[], nowMs: number = progress.startedAtMs): RunProgress {
  const listed = new Set(output.map((node) => node.nodeId));
  // No output read at all (an empty list) says nothing of which nodes are work.
  let nodes = listed.size === 0 ? progress.nodes : progress.nodes.map((node) => (node.task && !listed.has(node.nodeId) ? { ...node, task: false } : node));
  for (const node of output) {
    const start = pastInstant(node.startTime, nowMs);
    const end = start === undefined ? undefined : pastInstant(node.endTime, nowMs);
    nodes = upsert(nodes, node.nodeId, (known) => {
      const seen = known?.times?.startedAt !== undefined;
      return {
        nodeId: node.nodeId,
        title: node.title ?? node.nodeId,
        status: node.status,
        lastLine: '',
        ...known,
        ...(seen || start === undefined ? {} : { times: end === undefined || end < start ? { startedAt: start } : { startedAt: start, endedAt: end } }),
        task: true,
      };
    });
  }
  return { ...progress, nodes };
}

/**
 * How long a node has run, on the display's clock: to its end when done, to `nowMs` while executing,
 * nothing before it starts or when its start is not known.
 */
export function nodeElapsedMs(node: NodeProgress, nowMs: number): number | undefined {
  const { startedAt, endedAt } = node.times ?? {};
  return startedAt === undefined ? undefined : (endedAt ?? nowMs) - startedAt;
}

/** Task nodes that succeeded, failed (aborted and timed-out ones too), both (`done`), out of `total`. */
export interface ProgressCount {
  readonly succeeded: number;
  readonly failed: number;
  readonly done: number;
  readonly total: number;
}

/**
 * Task nodes done (`finish` or `failed`) out of the task nodes seen: a start or memo node is no work.
 * The first status read lists every node (service.md §4.1), so the total is whole from then on.
 */
export function progressCount(progress: RunProgress): ProgressCount {
  const tasks = progress.nodes.filter((node) => node.task);
  const succeeded = tasks.filter((node) => node.status === 'finish').length;
  const done = tasks.filter((node) => isNodeDone(node.status)).length;
  return { succeeded, failed: done - succeeded, done, total: tasks.length };
}

/**
 * `2/5`: the tasks that succeeded out of all, with `, 1 failed` when some failed. A failed or aborted
 * task is not one that worked, so it never counts in the first number: an aborted run of three tasks
 * reads `0/3, 3 failed`, not `3/3`.
 */
export function countFigures({ succeeded, failed, total }: ProgressCount): string {
  return `${succeeded}/${total}${failed > 0 ? `, ${failed} failed` : ''}`;
}

/** `2/5 nodes`, with `(1 failed)` when some failed (see {@link countFigures}). */
export function countLabel({ succeeded, failed, total }: ProgressCount): string {
  return `${succeeded}/${total} nodes${failed > 0 ? ` (${failed} failed)` : ''}`;
}
