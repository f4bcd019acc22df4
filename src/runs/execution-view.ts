import type { ExecutionStatus, NodeExecution, OutputFile, OutputMessage, OutputNode } from '../domain/model.js';

/** A message as the run has seen it so far, keyed by node and message id. */
export interface MessageView {
  readonly nodeId: string;
  readonly message: OutputMessage;
}

/**
 * Everything a run has learned about its execution: what the snapshot differ compares the next poll
 * against. Maps keep first-seen order, which is the service's parents-before-children order (service.md §4.1).
 */
export interface ExecutionView {
  readonly executionId: string;
  /** The last known execution status; `undefined` before the first read. */
  readonly status: ExecutionStatus | undefined;
  /** Each node at the furthest status it has reached. */
  readonly nodes: ReadonlyMap<string, NodeExecution>;
  /** Every message that has had text, at its latest text. */
  readonly messages: ReadonlyMap<string, MessageView>;
  /** The task nodes of the latest output read (service.md §4.2). */
  readonly outputNodes: readonly OutputNode[];
  /** Every file seen, at its fullest details, in first-seen order. */
  readonly files: readonly OutputFile[];
  /**
   * Indexes in `files` of files listed without a `url` yet, whose `file` event waits for it (or for the
   * end): one file, one event, and one a consumer can download from.
   */
  readonly heldFiles: ReadonlySet<number>;
  /** Odd readings already logged, so each is logged once. */
  readonly reported: ReadonlySet<string>;
}

/** The view before any poll; `status` is what the start answered, when there was one. */
export function initialView(executionId: string, status?: ExecutionStatus): ExecutionView {
  return {
    executionId,
    status,
    nodes: new Map(),
    messages: new Map(),
    outputNodes: [],
    files: [],
    heldFiles: new Set(),
    reported: new Set(),
  };
}

export function messageKey(nodeId: string, messageId: string): string {
  return `${nodeId}\u0000${messageId}`;
}

/**
 * service.md §4.6 gives files no id. A file is the same file as one seen before when name and type match
 * and no detail they both have differs: a listing that adds the `url`, `nodeId` or `size` it lacked
 * is that file's details arriving, not a second file; two files of one name on different nodes, or
 * at different links, stay two.
 */
export function sameFile(known: OutputFile, seen: OutputFile): boolean {
  const agree = (key: 'nodeId' | 'url' | 'size'): boolean => known[key] === undefined || seen[key] === undefined || known[key] === seen[key];
  return known.name === seen.name && known.type === seen.type && agree('nodeId') && agree('url') && agree('size');
}

/** `known` with every detail `seen` adds. */
export function withDetails(known: OutputFile, seen: OutputFile): OutputFile {
  return {
    ...known,
    ...(seen.nodeId === undefined ? {} : { nodeId: seen.nodeId }),
    ...(seen.url === undefined ? {} : { url: seen.url }),
    ...(seen.size === undefined ? {} : { size: seen.size }),
  };
}

/** The execution has ended: `finish` or `failed` are its only terminal statuses (service.md §3.3, §3.5). */
export function isExecutionOver(status: ExecutionStatus | undefined): status is 'finish' | 'failed' {
  return status === 'finish' || status === 'failed';
}
