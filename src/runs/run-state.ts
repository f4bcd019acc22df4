import type { ExecutionStatus, NodeError, NodeStatus, OutputFile, RunResult } from '../domain/model.js';
import type { ConnectionEvent, MessageEvent, NodeEvent, RunEvent } from './events.js';
import { isNodeDone } from './node-progress.js';

/** A message at its full text so far. */
export interface MessageState {
  readonly messageId: string;
  readonly role: MessageEvent['role'];
  readonly content: string;
  readonly reasoningContent: string;
}

/** A node as a UI shows it. */
export interface NodeState {
  readonly nodeId: string;
  readonly title?: string;
  readonly status: NodeStatus;
  readonly error?: NodeError;
  readonly messages: readonly MessageState[];
  /** The node's messages' text, joined by a blank line. */
  readonly text: string;
  /**
   * The node does work: a task node, one the output lists (service.md §4.2), counted in `progress`.
   * Nodes with no work (start, memo, resource…) are `finish` from the start (§3.2), so a node is taken
   * for a task once it was seen at any other status, had a message, or is in the result's output. A
   * task whose whole life passed between two reads looks like one with no work until the result.
   */
  readonly task: boolean;
  /**
   * How long the node has run, or ran: from its start and end times in the result's output when the
   * service gave them (§4.2), otherwise from when the run saw it executing to when it saw it done, on
   * the run's scheduler. Absent when neither is known (a node with no work, one not started yet).
   */
  readonly elapsedMs?: number;
}

/**
 * A run folded into what a UI shows: what `toRunState()` emits, one state per poll, and what
 * `shareRun()` replays to a late subscriber.
 */
export interface RunState {
  /** Absent until `started`. */
  readonly executionId?: string;
  readonly canvasId?: string;
  readonly status?: ExecutionStatus;
  /** In the service's parents-before-children order (service.md §4.1). */
  readonly nodes: readonly NodeState[];
  readonly files: readonly OutputFile[];
  /** Task nodes `finish` or `failed` out of all task nodes (see `NodeState.task`). */
  readonly progress: { readonly done: number; readonly total: number };
  /** Time from subscription to this state (to `finished` once finished), on the run's scheduler. */
  readonly elapsedMs: number;
  /** Present once `finished`. */
  readonly result?: RunResult;
  /**
   * Present while the run follows its execution through an outage (its reads fail, and it reads again
   * with backoff, `RunOptions.outageMs`); absent again once a read succeeds.
   */
  readonly reconnecting?: Reconnecting;
}

/** A run reading through an outage (`RunState.reconnecting`). */
export interface Reconnecting {
  /** The run's `elapsedMs` when the outage's first read failed. */
  readonly since: number;
  /** Reads failed in this outage so far. */
  readonly attempts: number;
  /** The last failure, in short (`HTTP 503`, `network error`, `timed out`, `request budget unavailable`). */
  readonly error: string;
}

export const INITIAL_RUN_STATE: RunState = { nodes: [], files: [], progress: { done: 0, total: 0 }, elapsedMs: 0 };

function withNodes(state: RunState, nodes: readonly NodeState[]): RunState {
  const tasks = nodes.filter((node) => node.task);
  return { ...state, nodes, progress: { done: tasks.filter((node) => isNodeDone(node.status)).length, total: tasks.length } };
}

function applyNode(nodes: readonly NodeState[], event: NodeEvent): readonly NodeState[] {
  const known = nodes.find((node) => node.nodeId === event.nodeId);
  // service.md §3.2: a node with no work is `finish` whenever it is seen; any other status, now or
  // before (`previous`), says it does work.
  const seenWorking = event.status !== 'finish' || (event.previous !== undefined && event.previous !== 'finish');
  const next: NodeState = {
    nodeId: event.nodeId,
    ...(event.title === undefined ? {} : { title: event.title }),
    status: event.status,
    ...(event.error === undefined ? {} : { error: event.error }),
    messages: known?.messages ?? [],
    text: known?.text ?? '',
    task: (known?.task ?? false) || seenWorking,
  };
  return known === undefined ? [...nodes, next] : nodes.map((node) => (node === known ? next : node));
}

function applyMessage(nodes: readonly NodeState[], event: MessageEvent): readonly NodeState[] {
  // Messages follow their node's event; a message of a node not seen yet still gets a place.
  const listed: readonly NodeState[] = nodes.some((node) => node.nodeId === event.nodeId)
    ? nodes
    : [...nodes, { nodeId: event.nodeId, status: 'unknown', messages: [], text: '', task: true }];
  const message: MessageState = {
    messageId: event.messageId,
    role: event.role,
    content: event.content,
    reasoningContent: event.reasoningContent,
  };
  return listed.map((node) => {
    if (node.nodeId !== event.nodeId) return node;
    const known = node.messages.some((entry) => entry.messageId === event.messageId);
    const messages = known ? node.messages.map((entry) => (entry.messageId === event.messageId ? message : entry)) : [...node.messages, message];
    return { ...node, messages, text: messages.map((entry) => entry.content).join('\n\n'), task: true };
  });
}

/** The result's output lists exactly the task nodes (service.md §4.2): the end settles what was a guess. */
function applyResult(nodes: readonly NodeState[], result: RunResult): readonly NodeState[] {
  const tasks = new Set(result.output.map((node) => node.nodeId));
  return nodes.map((node) => (node.task || !tasks.has(node.nodeId) ? node : { ...node, task: true }));
}

/** The state with no outage going on. */
function connected(state: RunState): RunState {
  const { reconnecting, ...rest } = state;
  return reconnecting === undefined ? state : rest;
}

/** A `connection` event folded in at `elapsedMs`: an outage keeps the `since` of its first failure. */
function applyConnection(state: RunState, event: ConnectionEvent, elapsedMs: number): RunState {
  if (event.reconnecting === undefined) return connected(state);
  const since = state.reconnecting?.since ?? Math.max(0, elapsedMs - event.reconnecting.failingForMs);
  return { ...state, reconnecting: { since, attempts: event.reconnecting.attempts, error: event.reconnecting.error } };
}

/**
 * One event folded into the state. Messages are taken at their full text (`content`), so the state
 * is right whether or not earlier text was `replaced`. Times are not read here: `toRunState` adds
 * them (`elapsedMs`) when it emits, and gives the run's `elapsedMs` at the event, for the start of
 * an outage (`reconnecting.since`; default 0).
 */
export function reduceRunState(state: RunState, event: RunEvent, elapsedMs = 0): RunState {
  switch (event.type) {
    case 'started':
      return {
        ...state,
        executionId: event.executionId,
        ...(event.canvasId === undefined ? {} : { canvasId: event.canvasId }),
        status: event.status,
      };
    case 'status':
      return { ...state, status: event.status };
    case 'node':
      return withNodes(state, applyNode(state.nodes, event));
    case 'message':
      return withNodes(state, applyMessage(state.nodes, event));
    case 'file':
      return { ...state, files: [...state.files, event.file] };
    case 'connection':
      return applyConnection(state, event, elapsedMs);
    case 'finished':
      // Read to its end: whatever outage there was is over.
      return { ...connected(withNodes(state, applyResult(state.nodes, event.result))), status: event.result.status, result: event.result };
    default:
      return event satisfies never;
  }
}

/**
 * The events that bring a newcomer to `state` at once: `started` at the current status, each node at
 * its current status, each message at its full text, each file — not every delta that led there.
 */
export function replayRunState(state: RunState): readonly RunEvent[] {
  const { executionId, status, result } = state;
  // A run stopped before its start was sent ends with a result and nothing else (no execution).
  if (executionId === undefined || status === undefined) return result === undefined ? [] : [{ type: 'finished', executionId: result.executionId, result }];
  const events: RunEvent[] = [{ type: 'started', executionId, ...(state.canvasId === undefined ? {} : { canvasId: state.canvasId }), status }];
  for (const node of state.nodes) {
    events.push({
      type: 'node',
      executionId,
      nodeId: node.nodeId,
      ...(node.title === undefined ? {} : { title: node.title }),
      status: node.status,
      ...(node.error === undefined ? {} : { error: node.error }),
    });
    for (const message of node.messages) {
      events.push({
        type: 'message',
        executionId,
        nodeId: node.nodeId,
        ...message,
        delta: message.content,
        reasoningDelta: message.reasoningContent,
        replaced: false,
      });
    }
  }
  for (const file of state.files) events.push({ type: 'file', executionId, file });
  // The outage goes on: a newcomer sees it from now, with its attempts so far.
  const { reconnecting } = state;
  if (reconnecting !== undefined) events.push({ type: 'connection', executionId, reconnecting: { attempts: reconnecting.attempts, failingForMs: 0, error: reconnecting.error } });
  if (state.result !== undefined) events.push({ type: 'finished', executionId, result: state.result });
  return events;
}
