import type { ExecutionStatus, NodeError, NodeStatus, OutputFile, RunResult } from '../domain/model.js';
import type { ConnectionEvent, MessageEvent, NodeEvent, RunEvent } from './events.js';

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
   * task whose whole life passed between two reads looks like one with no work until the result, and
   * a content node (document, image…, `init` until a tick after its parent, §3.2) like a task until then.
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
  /** How many task nodes (see `NodeState.task`) ended, and how: see {@link TaskProgress}. */
  readonly progress: TaskProgress;
  /** Time from subscription to this state (to `finished` once finished), on the run's scheduler. */
  readonly elapsedMs: number;
  /** Present once `finished`. */
  readonly result?: RunResult;
  /**
   * `true` on a run handle's states from `cancel()` (or its `signal`, its `timeoutMs`) until the
   * result: the abort is sent, or on its way, and the end is read as soon as it lands. A display
   * shows "cancelling…" at once rather than a run that still seems to work.
   */
  readonly cancelling?: true;
  /**
   * Present while the run follows its execution through an outage (its reads fail, and it reads again
   * with backoff, `RunOptions.outageMs`); absent again once a read succeeds.
   */
  readonly reconnecting?: Reconnecting;
}

/**
 * The task nodes of a run (`RunState.progress`): `succeeded` (`finish`) and `failed` (a failed node,
 * an aborted or timed-out one too, service.md §3.5, §3.6) out of `total`. `done` is `succeeded + failed`,
 * kept for displays that only count ended nodes; a bar that fills with `done` shows an aborted run full,
 * so fill it with `succeeded` and show `failed` apart.
 *
 * @example
 * ```ts
 * const { succeeded, failed, total } = state.progress;
 * render(`${succeeded}/${total}${failed > 0 ? ` (${failed} failed)` : ''}`);
 * ```
 */
export interface TaskProgress {
  readonly succeeded: number;
  readonly failed: number;
  /** `succeeded + failed`. */
  readonly done: number;
  readonly total: number;
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

export const INITIAL_RUN_STATE: RunState = { nodes: [], files: [], progress: { succeeded: 0, failed: 0, done: 0, total: 0 }, elapsedMs: 0 };

/** A node while it is folded: its fields as the latest events left them, its messages by id. */
interface NodeEntry {
  readonly nodeId: string;
  title: string | undefined;
  status: NodeStatus;
  error: NodeError | undefined;
  task: boolean;
  /** In first-seen order; a message's new text keeps its place. */
  readonly messages: Map<string, MessageState>;
  /** The node's state as last built, dropped when the node changes: unchanged nodes keep their object. */
  built: NodeState | undefined;
}

function builtNode(entry: NodeEntry): NodeState {
  const messages = [...entry.messages.values()];
  return {
    nodeId: entry.nodeId,
    ...(entry.title === undefined ? {} : { title: entry.title }),
    status: entry.status,
    ...(entry.error === undefined ? {} : { error: entry.error }),
    messages,
    text: messages.map((message) => message.content).join('\n\n'),
    task: entry.task,
  };
}

/**
 * A run's events folded into its {@link RunState}. Each event costs O(1) (a node, a message or a file
 * is found by its id, never by a scan), and the state is built when asked for, once per change, in
 * O(nodes + messages + files), each unchanged node keeping its object: a poll answered with n nodes
 * costs O(n), not O(n²). Messages are taken at their full text (`content`), so the state is right
 * whether or not earlier text was `replaced`. Times are not read here: `toRunState` adds them
 * (`elapsedMs`) when it emits.
 */
export class RunStateFold {
  #executionId: string | undefined;
  #canvasId: string | undefined;
  #status: ExecutionStatus | undefined;
  #result: RunResult | undefined;
  #reconnecting: Reconnecting | undefined;
  /** In first-seen order: the service's parents-before-children order (service.md §4.1). */
  readonly #nodes = new Map<string, NodeEntry>();
  readonly #files: OutputFile[] = [];
  #state: RunState | undefined = INITIAL_RUN_STATE;

  /**
   * Folds one event in. `elapsedMs` is the run's time at the event, read only for the start of an
   * outage (`reconnecting.since`; default 0).
   */
  apply(event: RunEvent, elapsedMs = 0): void {
    this.#state = undefined;
    switch (event.type) {
      case 'started':
        this.#executionId = event.executionId;
        this.#canvasId = event.canvasId ?? this.#canvasId;
        this.#status = event.status;
        return;
      case 'status':
        this.#status = event.status;
        return;
      case 'node':
        this.#applyNode(event);
        return;
      case 'message':
        this.#applyMessage(event);
        return;
      case 'file':
        this.#files.push(event.file);
        return;
      case 'connection':
        this.#applyConnection(event, elapsedMs);
        return;
      case 'finished':
        this.#applyResult(event.result);
        return;
      default:
        event satisfies never;
    }
  }

  /** The execution's id, once `started` came. */
  get executionId(): string | undefined {
    return this.#executionId;
  }

  /** The result, once `finished` came. */
  get result(): RunResult | undefined {
    return this.#result;
  }

  /** The state the events so far make: the same object until the next event. */
  get state(): RunState {
    this.#state ??= this.#build();
    return this.#state;
  }

  #applyNode(event: NodeEvent): void {
    const known = this.#nodes.get(event.nodeId);
    // service.md §3.2: a node with no work is `finish` whenever it is seen; any other status, now or
    // before (`previous`), says it does work.
    const seenWorking = event.status !== 'finish' || (event.previous !== undefined && event.previous !== 'finish');
    this.#nodes.set(event.nodeId, {
      nodeId: event.nodeId,
      title: event.title,
      status: event.status,
      error: event.error,
      task: (known?.task ?? false) || seenWorking,
      messages: known?.messages ?? new Map<string, MessageState>(),
      built: undefined,
    });
  }

  #applyMessage(event: MessageEvent): void {
    // Messages follow their node's event; a message of a node not seen yet still gets a place.
    const entry = this.#nodes.get(event.nodeId) ?? { nodeId: event.nodeId, title: undefined, status: 'unknown', error: undefined, task: true, messages: new Map<string, MessageState>(), built: undefined };
    this.#nodes.set(event.nodeId, entry);
    entry.messages.set(event.messageId, { messageId: event.messageId, role: event.role, content: event.content, reasoningContent: event.reasoningContent });
    entry.task = true;
    entry.built = undefined;
  }

  /** An outage keeps the `since` of its first failure; a `connection` event without `reconnecting` ends it. */
  #applyConnection(event: ConnectionEvent, elapsedMs: number): void {
    if (event.reconnecting === undefined) {
      this.#reconnecting = undefined;
      return;
    }
    const since = this.#reconnecting?.since ?? Math.max(0, elapsedMs - event.reconnecting.failingForMs);
    this.#reconnecting = { since, attempts: event.reconnecting.attempts, error: event.reconnecting.error };
  }

  /** The result's output lists exactly the task nodes (service.md §4.2): the end settles what was a guess. */
  #applyResult(result: RunResult): void {
    for (const { nodeId } of result.output) {
      const entry = this.#nodes.get(nodeId);
      if (entry === undefined || entry.task) continue;
      entry.task = true;
      entry.built = undefined;
    }
    this.#status = result.status;
    this.#result = result;
    // Read to its end: whatever outage there was is over.
    this.#reconnecting = undefined;
  }

  #build(): RunState {
    const nodes: NodeState[] = [];
    let succeeded = 0;
    let failed = 0;
    let total = 0;
    for (const entry of this.#nodes.values()) {
      entry.built ??= builtNode(entry);
      nodes.push(entry.built);
      if (!entry.task) continue;
      total += 1;
      if (entry.status === 'finish') succeeded += 1;
      else if (entry.status === 'failed') failed += 1;
    }
    return {
      ...(this.#executionId === undefined ? {} : { executionId: this.#executionId }),
      ...(this.#canvasId === undefined ? {} : { canvasId: this.#canvasId }),
      ...(this.#status === undefined ? {} : { status: this.#status }),
      nodes,
      files: [...this.#files],
      progress: { succeeded, failed, done: succeeded + failed, total },
      elapsedMs: 0,
      ...(this.#result === undefined ? {} : { result: this.#result }),
      ...(this.#reconnecting === undefined ? {} : { reconnecting: this.#reconnecting }),
    };
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
