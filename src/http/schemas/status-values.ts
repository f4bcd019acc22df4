import type { ExecutionStatus, MessageType, NodeStatus } from '../../domain/model.js';

const EXECUTION_STATUSES: ReadonlySet<string> = new Set<ExecutionStatus>(['init', 'executing', 'finish', 'failed']);
const NODE_STATUSES: ReadonlySet<string> = new Set<NodeStatus>(['init', 'waiting', 'executing', 'finish', 'failed']);

/**
 * Maps a raw execution status to the model: the service answers a start with `running`, which the
 * spec does not list, while the execution itself is `executing` (service.md §3.1). Anything unknown
 * becomes `unknown` (the raw value is kept beside it) rather than failing a poll.
 */
export function toExecutionStatus(raw: string): ExecutionStatus {
  if (raw === 'running') return 'executing';
  return EXECUTION_STATUSES.has(raw) ? (raw as ExecutionStatus) : 'unknown';
}

/** Maps a raw node status; `waiting` never occurs on the service but is accepted (service.md §3.1). */
export function toNodeStatus(raw: string): NodeStatus {
  if (raw === 'running') return 'executing';
  return NODE_STATUSES.has(raw) ? (raw as NodeStatus) : 'unknown';
}

/** Maps a raw message type (spec §2.5). */
export function toMessageType(raw: string): MessageType {
  return raw === 'ai' || raw === 'tool' ? raw : 'unknown';
}
