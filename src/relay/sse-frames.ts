import type { RunEvent } from '../runs/events.js';
import type { RunState } from '../runs/run-state.js';

/**
 * The frames of a relay's `text/event-stream`. JSON never holds a raw line break (JSON.stringify
 * escapes them), so each `data:` is one line and a frame ends at the first blank line.
 */

/**
 * One run event: its type as the SSE event name, its sequence number as the id a viewer resumes after.
 * A `snapshot` (the follow joined a hub's execution late) goes as the relay's own snapshot frame: its
 * `data` is the state, as every viewer reads a snapshot.
 */
export function eventFrame(seq: number, event: RunEvent): string {
  if (event.type === 'snapshot') return snapshotFrame(seq, event.state);
  return `event: ${event.type}\nid: ${seq}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** What the events up to `seq` add up to, for a late viewer: it stands for them, and the viewer goes on after `seq`. */
export function snapshotFrame(seq: number, state: RunState): string {
  return `event: snapshot\nid: ${seq}\ndata: ${JSON.stringify(state)}\n\n`;
}

/** How long a disconnected viewer waits before reconnecting (EventSource and `connectRun` obey it). */
export function retryFrame(retryMs: number): string {
  return `retry: ${retryMs}\n\n`;
}

/** A comment: keeps proxies from closing an idle stream, and lets the server notice a viewer gone. */
export const HEARTBEAT_FRAME = ': heartbeat\n\n';

/** The follow of the execution failed: what went wrong, in short, then the stream ends. */
export function errorFrame(error: string, message: string): string {
  return `event: error\ndata: ${JSON.stringify({ error, message })}\n\n`;
}
