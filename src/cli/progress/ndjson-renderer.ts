import type { RunEvent } from '../../index.js';
import type { RunRenderer, TextSink } from './renderer.js';

/**
 * The events of one reading in the order the run went through them: the execution's status follows
 * from its nodes (service.md §3.3: a failed node fails it, the last node's end finishes it), so a
 * `status` event goes after the `node` events of the same reading; everything else keeps its place.
 */
export function inReadingOrder(events: readonly RunEvent[]): readonly RunEvent[] {
  const lastNode = events.findLastIndex((event) => event.type === 'node');
  const statuses = events.filter((event, index) => event.type === 'status' && index < lastNode);
  if (statuses.length === 0) return events;
  return events.flatMap((event, index) => {
    if (statuses.includes(event)) return [];
    return index === lastNode ? [event, ...statuses] : [event];
  });
}

/**
 * `--json`: every event as one line of JSON (NDJSON), exactly as the library emits it, for scripts,
 * with `at`: when it was shown (ISO 8601), for logs and timings. The events of one reading, which
 * arrive together (synchronously), are written in the order the run went through them.
 */
export function ndjsonRenderer(out: TextSink, now: () => number = Date.now): RunRenderer {
  let pending: RunEvent[] = [];
  const flush = (): void => {
    const batch = pending;
    pending = [];
    const at = new Date(now()).toISOString();
    for (const event of inReadingOrder(batch)) out.write(`${JSON.stringify({ ...event, at })}\n`);
  };
  return {
    event: (event: RunEvent) => {
      if (pending.length === 0) queueMicrotask(flush);
      pending.push(event);
    },
    close: () => {
      flush();
    },
  };
}
