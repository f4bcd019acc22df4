import type { RunEvent } from '../runs/events.js';

/** The longest message text one progress notification carries; the result has the whole text. */
const MAX_MESSAGE_TEXT = 2_000;

function clipped(text: string): string {
  return text.length <= MAX_MESSAGE_TEXT ? text : `${text.slice(0, MAX_MESSAGE_TEXT - 1)}…`;
}

/**
 * What a caller following a run as a tool call is told of one event, as the text of a progress
 * notification: the execution's id and status, each node's transition, new message text, each output
 * file, outages of the reads. Nothing for the `finished` event (the tool's result says it) and the
 * state a late subscriber starts from.
 *
 * @example
 * ```ts
 * progressText({ type: 'node', executionId, nodeId: 'node-1', title: 'Gather facts', status: 'executing' });
 * // 'Gather facts: executing'
 * ```
 */
export function progressText(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'started':
      return `Started execution ${event.executionId}`;
    case 'status':
      return `Execution ${event.status}`;
    case 'node': {
      const name = event.title ?? event.nodeId;
      return event.error === undefined ? `${name}: ${event.status}` : `${name}: ${event.status} (${event.error.message})`;
    }
    case 'message': {
      const text = event.replaced ? event.content : event.delta;
      return text.trim() === '' ? undefined : clipped(text);
    }
    case 'file':
      return `File ${event.file.name}`;
    case 'connection':
      return event.reconnecting === undefined ? 'Reading the execution again' : `Cannot read the execution (${event.reconnecting.error}); trying again`;
    case 'snapshot':
    case 'finished':
      return undefined;
    default:
      return event satisfies never;
  }
}
