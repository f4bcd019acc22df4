import type { ExecutionStatus, NodeStatus } from '../domain/model.js';
import type { MessageEvent, NodeEvent, RunEvent, StatusEvent } from '../runs/events.js';
import { type RunState, RunStateFold } from '../runs/run-state.js';

/** A message's text as the stream last told it. */
interface StreamedText {
  readonly content: string;
  readonly reasoningContent: string;
}

/**
 * An execution as its event stream in Redis tells it, and the judge of what a poller may add to it:
 * only what is news to the stream. A poller that takes an execution over reads it afresh, and its first
 * reading restates the whole execution (`started`, every node, every message's full text); what the
 * stream already holds is left out, and what changed comes as the change since the stream's last word
 * (a node's `previous`, a message's `delta`), so a follower of the stream sees every change once, in
 * order, whichever process polled it. In the ordinary course a poller's events are news already and
 * pass unchanged. Each event costs O(1) (nodes, messages and files by their ids).
 */
export class StreamedRun {
  readonly #fold = new RunStateFold();
  #executionId: string | undefined;
  #status: ExecutionStatus | undefined;
  #finished = false;
  readonly #nodes = new Map<string, NodeStatus>();
  readonly #messages = new Map<string, StreamedText>();
  readonly #files = new Set<string>();

  /** The stream so far, as the state its events add up to (none for an empty stream). */
  constructor(state?: RunState) {
    if (state !== undefined) this.#know({ type: 'snapshot', executionId: state.executionId ?? '', state });
  }

  /** The state the stream's events add up to. */
  get state(): RunState {
    return this.#fold.state;
  }

  /** The stream ended with `finished`. */
  get finished(): boolean {
    return this.#finished;
  }

  /** What `event` adds to the stream: itself, the change it brings since the stream's last word, or nothing. */
  admit(event: RunEvent): RunEvent | undefined {
    const admitted = this.#news(event);
    if (admitted !== undefined) this.#know(admitted);
    return admitted;
  }

  #news(event: RunEvent): RunEvent | undefined {
    if (this.#finished) return undefined;
    switch (event.type) {
      case 'started':
        return this.#executionId === undefined ? event : undefined;
      case 'snapshot':
        // A poll that joined a run late: what it stands for is only news to an empty stream.
        return this.#executionId === undefined ? event : undefined;
      case 'status': {
        if (this.#status === event.status) return undefined;
        return event.previous === this.#status ? event : withPrevious(event, this.#status);
      }
      case 'node': {
        const known = this.#nodes.get(event.nodeId);
        if (known === event.status) return undefined;
        return event.previous === known ? event : withPrevious(event, known);
      }
      case 'message':
        return this.#messageNews(event);
      case 'file':
        return this.#files.has(fileKey(event.file)) ? undefined : event;
      case 'connection':
        return event;
      case 'finished':
        return event;
      default:
        return assertNever(event);
    }
  }

  #messageNews(event: MessageEvent): MessageEvent | undefined {
    const known = this.#messages.get(messageKey(event.nodeId, event.messageId));
    if (known === undefined) {
      if (!event.replaced && event.delta === event.content && event.reasoningDelta === event.reasoningContent) return event;
      return { ...event, delta: event.content, reasoningDelta: event.reasoningContent, replaced: false };
    }
    if (known.content === event.content && known.reasoningContent === event.reasoningContent) return undefined;
    if (event.content.startsWith(known.content) && event.reasoningContent.startsWith(known.reasoningContent)) {
      const delta = event.content.slice(known.content.length);
      const reasoningDelta = event.reasoningContent.slice(known.reasoningContent.length);
      if (!event.replaced && event.delta === delta && event.reasoningDelta === reasoningDelta) return event;
      return { ...event, delta, reasoningDelta, replaced: false };
    }
    return { ...event, delta: event.content, reasoningDelta: event.reasoningContent, replaced: true };
  }

  /** Takes in one event of the stream. */
  #know(event: RunEvent): void {
    this.#fold.apply(event);
    switch (event.type) {
      case 'started':
        this.#executionId = event.executionId;
        this.#status = event.status;
        return;
      case 'snapshot': {
        const { state } = event;
        this.#executionId = state.executionId ?? (state.result === undefined ? undefined : state.result.executionId);
        this.#status = state.status;
        for (const node of state.nodes) {
          this.#nodes.set(node.nodeId, node.status);
          for (const message of node.messages) this.#messages.set(messageKey(node.nodeId, message.messageId), message);
        }
        for (const file of state.files) this.#files.add(fileKey(file));
        if (state.result !== undefined) this.#finished = true;
        return;
      }
      case 'status':
        this.#status = event.status;
        return;
      case 'node':
        this.#nodes.set(event.nodeId, event.status);
        return;
      case 'message':
        this.#messages.set(messageKey(event.nodeId, event.messageId), { content: event.content, reasoningContent: event.reasoningContent });
        return;
      case 'file':
        this.#files.add(fileKey(event.file));
        return;
      case 'connection':
        return;
      case 'finished':
        this.#finished = true;
        return;
      default:
        assertNever(event);
    }
  }
}

/** `event` with the stream's last word as its `previous` (none when the stream had none). */
function withPrevious<E extends StatusEvent | NodeEvent>(event: E, previous: E['previous']): E {
  const rest = Object.fromEntries(Object.entries(event).filter(([key]) => key !== 'previous')) as E;
  return previous === undefined ? rest : { ...rest, previous };
}

function messageKey(nodeId: string, messageId: string): string {
  return `${nodeId}\u0000${messageId}`;
}

/** A file is news when its name is new, or its url (service.md §4.6: a file listed without one gets it later). */
function fileKey(file: { readonly name: string; readonly url?: string | undefined }): string {
  return `${file.name}\u0000${file.url ?? ''}`;
}

function assertNever(value: never): never {
  throw new Error(`Unexpected event ${JSON.stringify(value)}`);
}
