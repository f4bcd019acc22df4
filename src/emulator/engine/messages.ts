import { graphemes } from '../graphemes.js';
import type { ScriptedMessage, WorkflowNode } from '../workflows/workflow.js';
import type { NodeState } from './snapshot.js';
import { MESSAGE_BATCH_MS } from './timing.js';

/**
 * How partial output shows while a node works (service.md §4.4):
 * `batches` — the service: whole finished messages appear in ~3 s batches and never change;
 * `growing` — what the spec allows: a message's content grows while it is written.
 */
export type PartialOutputMode = 'batches' | 'growing';

/** A message as visible at one instant; `index` is its position in the node's script. */
export interface VisibleMessage {
  readonly index: number;
  readonly content: string;
  readonly reasoning: string | null;
  readonly type: 'ai' | 'tool';
}

/** The messages of `node` visible at emulator time `at`, given its state then. */
export function visibleMessages(node: WorkflowNode, state: NodeState, at: number, mode: PartialOutputMode): VisibleMessage[] {
  // service.md §4.2: nodes still `init` show no messages.
  if (state.status === 'init' || state.startAt === undefined) return [];
  const ended = state.endAt !== undefined;
  const elapsed = Math.min(at, state.endAt ?? at) - state.startAt;
  const visible: VisibleMessage[] = [];
  let writingFrom = 0;
  node.messages.forEach((message, index) => {
    const shown = mode === 'batches' ? persisted(message, elapsed, ended) : written(message, elapsed, writingFrom);
    writingFrom = message.atMs;
    // service.md §4.5: messages with no content and no reasoning are left out.
    if (shown === undefined || (shown.content === '' && (shown.reasoning ?? '') === '')) return;
    visible.push({ index, type: message.type, ...shown });
  });
  return visible;
}

type Shown = Pick<VisibleMessage, 'content' | 'reasoning'> | undefined;

function persisted(message: ScriptedMessage, elapsed: number, ended: boolean): Shown {
  if (message.atMs > elapsed) return undefined;
  // service.md §4.4: a finished message waits for the next batch; the node's end flushes the rest.
  const persistedAt = Math.ceil(message.atMs / MESSAGE_BATCH_MS) * MESSAGE_BATCH_MS;
  if (!ended && persistedAt > elapsed) return undefined;
  return { content: message.content, reasoning: message.reasoning };
}

function written(message: ScriptedMessage, elapsed: number, writingFrom: number): Shown {
  if (elapsed >= message.atMs) return { content: message.content, reasoning: message.reasoning };
  if (elapsed <= writingFrom) return undefined;
  const fraction = (elapsed - writingFrom) / (message.atMs - writingFrom);
  return { content: prefix(message.content, fraction), reasoning: message.reasoning === null ? null : prefix(message.reasoning, fraction) };
}

/** A prefix by graphemes, so that growing text never splits a character. */
function prefix(text: string, fraction: number): string {
  const chars = graphemes(text);
  return chars.slice(0, Math.floor(chars.length * fraction)).join('');
}
