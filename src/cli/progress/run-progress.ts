import type { ExecutionStatus, NodeError, NodeStatus, OutputFile, RunEvent, RunResult } from '../../index.js';

/** A node as the progress display shows it: status, when it started and ended (display clock), last text. */
export interface NodeProgress {
  readonly nodeId: string;
  readonly title: string;
  readonly status: NodeStatus;
  /** When the node was first seen executing; absent for a node first seen done. */
  readonly startedAtMs?: number;
  readonly endedAtMs?: number;
  readonly error?: NodeError;
  /** The node's latest line of text, for the live display. */
  readonly lastLine: string;
}

/** A run as the progress display shows it. */
export interface RunProgress {
  readonly startedAtMs: number;
  readonly executionId?: string;
  readonly canvasId?: string;
  readonly status?: ExecutionStatus;
  readonly nodes: readonly NodeProgress[];
  readonly files: readonly OutputFile[];
  readonly result?: RunResult;
}

/**
 * The progress of a run that has not started yet.
 *
 * @example
 * ```ts
 * let progress = initialProgress(Date.now());
 * ```
 */
export function initialProgress(nowMs: number): RunProgress {
  return { startedAtMs: nowMs, nodes: [], files: [] };
}

function isDone(status: NodeStatus): boolean {
  return status === 'finish' || status === 'failed';
}

function lastLineOf(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return lines.at(-1) ?? '';
}

function nextNode(known: NodeProgress | undefined, event: Extract<RunEvent, { type: 'node' }>, nowMs: number): NodeProgress {
  // A node first seen already done ran between two polls (or had no work): its time is not known.
  const startedAtMs = known?.startedAtMs ?? (event.status === 'executing' ? nowMs : undefined);
  const endedAtMs = known?.endedAtMs ?? (isDone(event.status) && startedAtMs !== undefined ? nowMs : undefined);
  const error = event.error ?? known?.error;
  return {
    nodeId: event.nodeId,
    title: event.title ?? known?.title ?? event.nodeId,
    status: event.status,
    lastLine: known?.lastLine ?? '',
    ...(startedAtMs === undefined ? {} : { startedAtMs }),
    ...(endedAtMs === undefined ? {} : { endedAtMs }),
    ...(error === undefined ? {} : { error }),
  };
}

function upsert(nodes: readonly NodeProgress[], nodeId: string, update: (known: NodeProgress | undefined) => NodeProgress): readonly NodeProgress[] {
  const known = nodes.find((node) => node.nodeId === nodeId);
  return known === undefined ? [...nodes, update(undefined)] : nodes.map((node) => (node === known ? update(known) : node));
}

/**
 * One event folded into the display's view of the run. `nowMs` is the display's clock: node times are
 * what the user saw, not the server's.
 *
 * @example
 * ```ts
 * progress = advanceProgress(progress, event, Date.now());
 * ```
 */
export function advanceProgress(progress: RunProgress, event: RunEvent, nowMs: number): RunProgress {
  switch (event.type) {
    case 'started':
      return { ...progress, executionId: event.executionId, status: event.status, ...(event.canvasId === undefined ? {} : { canvasId: event.canvasId }) };
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
          lastLine: lastLineOf(event.content) === '' ? (known?.lastLine ?? '') : lastLineOf(event.content),
        })),
      };
    case 'file':
      return { ...progress, files: [...progress.files, event.file] };
    case 'finished':
      return { ...progress, status: event.result.status, result: event.result, files: event.result.files };
    default:
      return event satisfies never;
  }
}

/**
 * How long a node has run: to its end when done, to `nowMs` while executing, nothing before it starts.
 *
 * @example
 * ```ts
 * const ms = nodeElapsedMs(node, Date.now());
 * ```
 */
export function nodeElapsedMs(node: NodeProgress, nowMs: number): number | undefined {
  if (node.startedAtMs === undefined) return undefined;
  return (node.endedAtMs ?? nowMs) - node.startedAtMs;
}

/**
 * Nodes done (`finish` or `failed`) out of all nodes seen.
 *
 * @example
 * ```ts
 * const { done, total } = progressCount(progress);
 * ```
 */
export function progressCount(progress: RunProgress): { readonly done: number; readonly total: number } {
  return { done: progress.nodes.filter((node) => isDone(node.status)).length, total: progress.nodes.length };
}
