import type { RunEvent } from '../../src/runs/events.js';

/** One event as a follower got it: its place in the hub's sequence, and the event. */
export interface SeenEvent {
  readonly seq: number;
  readonly event: RunEvent;
}

/**
 * Why a follower's events of one execution are not "every change once, in order", or `undefined`
 * when they are: places 1, 2, 3… with no gap or repeat, one `started` first and one `finished` last,
 * each node's statuses each seen once, and each message's deltas adding up to its content with no
 * text repeated or missing.
 */
export function onceInOrder(seen: readonly SeenEvent[]): string | undefined {
  for (const [index, { seq }] of seen.entries()) if (seq !== index + 1) return `place ${String(seq)} at index ${String(index)}`;
  const types = seen.map(({ event }) => event.type);
  if (types[0] !== 'started') return `first event ${String(types[0])}`;
  if (types.filter((type) => type === 'started').length !== 1) return 'started more than once';
  if (types.at(-1) !== 'finished' || types.filter((type) => type === 'finished').length !== 1) return `not one finished at the end: ${types.join(',')}`;
  const nodes = new Map<string, string[]>();
  const texts = new Map<string, string>();
  for (const { event } of seen) {
    if (event.type === 'node') {
      const statuses = nodes.get(event.nodeId) ?? [];
      if (statuses.includes(event.status)) return `node ${event.nodeId} ${event.status} twice`;
      if ((event.previous ?? undefined) !== statuses.at(-1)) return `node ${event.nodeId} ${event.status} after ${String(statuses.at(-1))}, says previous ${String(event.previous)}`;
      nodes.set(event.nodeId, [...statuses, event.status]);
    }
    if (event.type === 'message') {
      const key = `${event.nodeId}/${event.messageId}`;
      const text = event.replaced ? event.delta : `${texts.get(key) ?? ''}${event.delta}`;
      if (text !== event.content) return `message ${key}: deltas add up to ${JSON.stringify(text)}, content ${JSON.stringify(event.content)}`;
      if (event.delta === '' && event.reasoningDelta === '') return `message ${key}: an event with nothing new`;
      texts.set(key, text);
    }
  }
  return undefined;
}
