import type { ExecutionStatus, NodeExecution, OutputFile, OutputMessage, OutputNode } from '../http/model.js';

/** A message as the run has seen it so far, keyed by node and message id. */
export interface MessageView {
  readonly nodeId: string;
  readonly message: OutputMessage;
}

/**
 * Everything a run has learned about its execution: what the snapshot differ compares the next poll
 * against. Maps keep first-seen order, which is the service's parents-before-children order (PROTOCOL §4.1).
 */
export interface ExecutionView {
  readonly executionId: string;
  /** The last known execution status; `undefined` before the first read. */
  readonly status: ExecutionStatus | undefined;
  /** Each node at the furthest status it has reached. */
  readonly nodes: ReadonlyMap<string, NodeExecution>;
  /** Every message that has had text, at its latest text. */
  readonly messages: ReadonlyMap<string, MessageView>;
  /** The task nodes of the latest output read (PROTOCOL §4.2). */
  readonly outputNodes: readonly OutputNode[];
  readonly files: ReadonlyMap<string, OutputFile>;
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
    files: new Map(),
    reported: new Set(),
  };
}

export function messageKey(nodeId: string, messageId: string): string {
  return `${nodeId}\u0000${messageId}`;
}

/** PROTOCOL §4.6 gives files no id: a file is the same file when node, name and link match. */
export function fileKey(file: OutputFile): string {
  return `${file.nodeId ?? ''}\u0000${file.name}\u0000${file.url ?? ''}`;
}
