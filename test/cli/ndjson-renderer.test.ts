import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ExecutionSnapshot, RunEvent } from '../../src/index.js';
import { inReadingOrder, ndjsonRenderer } from '../../src/cli/progress/ndjson-renderer.js';
import { diffStatus, initialView } from '../../src/runs/execution-view.js';

const executionId = 'we-1';

function snapshot(status: ExecutionSnapshot['status'], write: 'executing' | 'finish'): ExecutionSnapshot {
  return {
    executionId,
    status,
    rawStatus: status,
    nodes: [
      { nodeId: 'node-start', status: 'finish', rawStatus: 'finish', title: 'Start' },
      { nodeId: 'node-write', status: write, rawStatus: write, title: 'Write' },
    ],
  };
}

describe('--json', () => {
  it('writes the last node\'s finish before the execution\'s, when one status read shows both', async () => {
    // The events a run emits for two readings: the node running, then the node and the execution done.
    const first = diffStatus(initialView(executionId), snapshot('executing', 'executing'));
    const second = diffStatus(first.view, snapshot('finish', 'finish'));
    let text = '';
    const renderer = ndjsonRenderer({ write: (chunk: string) => (text += chunk) }, () => 0);
    for (const event of first.events) renderer.event(event);
    await Promise.resolve();
    for (const event of second.events) renderer.event(event);
    renderer.close(undefined);
    const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; status: string; nodeId?: string });
    expect(lines.map((line) => `${line.type}:${line.nodeId ?? ''}:${line.status}`)).toEqual([
      'node:node-start:finish',
      'node:node-write:executing',
      'status::executing',
      'node:node-write:finish',
      'status::finish',
    ]);
  });
});

const eventArbitrary: fc.Arbitrary<RunEvent> = fc.oneof(
  fc.constantFrom('init', 'executing', 'finish', 'failed').map((status): RunEvent => ({ type: 'node', executionId, nodeId: `node-${status}`, status })),
  fc.constantFrom('executing', 'finish', 'failed').map((status): RunEvent => ({ type: 'status', executionId, status })),
  fc.constant<RunEvent>({ type: 'message', executionId, nodeId: 'n', messageId: 'm', role: 'ai', delta: 'x', reasoningDelta: '', content: 'x', reasoningContent: '', replaced: false }),
);

describe('inReadingOrder', () => {
  it('keeps every event once, puts no status before a node event, and keeps the order of everything else', () => {
    fc.assert(
      fc.property(fc.array(eventArbitrary, { maxLength: 12 }), (given) => {
        const events = given.map((event) => ({ ...event }));
        const ordered = inReadingOrder(events);
        expect(new Set(ordered)).toEqual(new Set(events));
        expect(new Set(ordered).size).toBe(events.length);
        const lastNode = ordered.findLastIndex((event) => event.type === 'node');
        expect(ordered.slice(0, Math.max(0, lastNode)).some((event) => event.type === 'status')).toBe(false);
        const others = (list: readonly RunEvent[]): readonly RunEvent[] => list.filter((event) => event.type !== 'status');
        expect(others(ordered)).toEqual(others(events));
        const statuses = (list: readonly RunEvent[]): readonly RunEvent[] => list.filter((event) => event.type === 'status');
        expect(statuses(ordered)).toEqual(statuses(events));
      }),
    );
  });
});
