import type { ExecutionOutput, OutputMessage } from '../http/model.js';
import type { MessageEvent, RunEvent } from './events.js';
import { type ExecutionView, fileKey, messageKey, type MessageView } from './execution-view.js';
import { messageChange } from './message-change.js';
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
 * Compares an output reading with the view: `message` events with exact deltas for each message whose
 * text is new, grew or was rewritten (PROTOCOL §4.4), then a `file` event for each file not seen before
 * (PROTOCOL §4.6). A message missing from a later reading is kept: text once delivered is never taken back.
 *
 * @example
 * ```ts
 * const { events, view: next } = diffOutput(view, await api.output(view.executionId));
 * ```
 */
export function diffOutput(view: ExecutionView, output: ExecutionOutput): ViewDiff {
  const log = new WarningLog(view.reported);
  const events: RunEvent[] = [];
  const { executionId } = view;

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

  const files = new Map(view.files);
  for (const file of output.files) {
    const key = fileKey(file);
    if (files.has(key)) continue;
    files.set(key, file);
    events.push({ type: 'file', executionId, file });
  }

  return {
    view: { ...view, messages, files, outputNodes: output.output, reported: log.reported },
    events,
    warnings: log.warnings,
  };
}
