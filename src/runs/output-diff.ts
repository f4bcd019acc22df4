import type { ExecutionOutput, OutputMessage } from '../domain/model.js';
import type { MessageEvent, RunEvent } from './events.js';
import type { OutputNode } from '../domain/model.js';
import { type ExecutionView, FileIndex, messageKey, type MessageView, withDetails } from './execution-view.js';
import { messageChange } from './message-change.js';
import { moveNodes } from './status-diff.js';
import { type ViewDiff, WarningLog } from './view-diff.js';

function roleOf(message: OutputMessage, log: WarningLog, executionId: string): MessageEvent['role'] {
  switch (message.type) {
    case 'ai':
    case 'tool':
      return message.type;
    case 'unknown':
      // Its text is still the node's output: deliver it as the AI's rather than drop it.
      log.once(`message-type:${message.rawType}`, 'Unknown message type, read as ai', { executionId, type: message.rawType });
      return 'ai';
    default:
      return message.type satisfies never;
  }
}

/**
 * Compares an output reading with the view: first a `node` event for each task node the reading shows
 * further on than the view (the output lists them with their status, service.md §4.2; it is read after
 * the status, so it may be the fresher of the two, as for a branch that finished after its execution
 * failed, §3.3), then `message` events with exact deltas for each message whose
 * text is new, grew or was rewritten (service.md §4.4), then a `file` event for each file not seen before
 * (service.md §4.6) — held back while it has no `url`, until its url arrives (see `ExecutionView.heldFiles`).
 * A file listed again at a new `url` (a link signed anew on each read) is the same file: no second
 * event, and the view keeps its newest link.
 * A message or node missing from a later reading is kept: text once delivered is never taken back.
 */
export function diffOutput(view: ExecutionView, output: ExecutionOutput): ViewDiff {
  const log = new WarningLog(view.reported);
  const events: RunEvent[] = [];
  const { executionId } = view;

  const nodes = new Map(view.nodes);
  moveNodes(executionId, nodes, output.output, log, events);

  const messages = new Map(view.messages);
  for (const node of output.output) {
    for (const message of node.messages) {
      const key = messageKey(node.nodeId, message.messageId);
      const known: MessageView | undefined = messages.get(key);
      const change = messageChange(known?.message, message);
      if (change === undefined) continue;
      messages.set(key, { nodeId: node.nodeId, message });
      events.push({
        type: 'message',
        executionId,
        nodeId: node.nodeId,
        messageId: message.messageId,
        role: roleOf(message, log, executionId),
        ...change,
        content: message.content,
        reasoningContent: message.reasoningContent,
      });
    }
  }

  const files = [...view.files];
  const held = new Set(view.heldFiles);
  const index = new FileIndex(files);
  for (const file of output.files) {
    const place = index.find(file);
    const known = place === undefined ? undefined : files[place];
    if (place === undefined || known === undefined) {
      index.add(file, files.length);
      files.push(file);
      if (file.url === undefined) held.add(files.length - 1);
      else events.push({ type: 'file', executionId, file });
      continue;
    }
    const updated = withDetails(known, file);
    files[place] = updated;
    // A new link changes no key; a node or size now known does.
    if (updated.nodeId !== known.nodeId || updated.size !== known.size) index.add(updated, place);
    if (held.has(place) && updated.url !== undefined) {
      held.delete(place);
      events.push({ type: 'file', executionId, file: updated });
    }
  }

  return {
    view: { ...view, nodes, messages, files, heldFiles: held, outputNodes: mergeOutputNodes(view.outputNodes, output.output), reported: log.reported },
    events,
    warnings: log.warnings,
  };
}

/**
 * The task nodes as the latest reading shows them, with every node an earlier reading showed and this
 * one leaves out kept where it was: its delivered text belongs to the run's result.
 */
function mergeOutputNodes(known: readonly OutputNode[], latest: readonly OutputNode[]): readonly OutputNode[] {
  const byId = new Map(latest.map((node) => [node.nodeId, node]));
  const merged = known.map((node) => byId.get(node.nodeId) ?? node);
  const seen = new Set(known.map((node) => node.nodeId));
  return [...merged, ...latest.filter((node) => !seen.has(node.nodeId))];
}

/**
 * At the end, the `file` events of files still waiting for a `url`: what is known of them is all
 * there will be.
 */
export function announceHeldFiles(view: ExecutionView): ViewDiff {
  const events: RunEvent[] = [...view.heldFiles].sort((a, b) => a - b).flatMap((index) => {
    const file = view.files[index];
    return file === undefined ? [] : [{ type: 'file' as const, executionId: view.executionId, file }];
  });
  return { view: { ...view, heldFiles: new Set() }, events, warnings: [] };
}
