import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeStatus, RunResult } from '../../src/domain/model.js';
import { StreamedRun } from '../../src/redis/streamed-run.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, RunStateFold } from '../../src/runs/run-state.js';
import { onceInOrder } from './hub-events.js';

const EXECUTION = 'we-1';
const NODES = ['node-a', 'node-b', 'node-c'] as const;
const NEXT: Partial<Record<NodeStatus, NodeStatus>> = { init: 'executing', executing: 'finish' };

/** One change of a run: a node moves on, or a message of a node grows. */
type Change = { readonly kind: 'node'; readonly node: number } | { readonly kind: 'text'; readonly node: number; readonly message: number; readonly chunk: string };

const changeArbitrary: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant('node' as const), node: fc.nat({ max: NODES.length - 1 }) }),
  fc.record({ kind: fc.constant('text' as const), node: fc.nat({ max: NODES.length - 1 }), message: fc.nat({ max: 1 }), chunk: fc.string({ minLength: 1, maxLength: 4 }) }),
);

/** The events a poller following from the start gives for `changes`: `started`, each change as it comes, `finished`. */
function eventsOf(changes: readonly Change[]): RunEvent[] {
  const statuses = new Map<string, NodeStatus>();
  const texts = new Map<string, string>();
  const events: RunEvent[] = [{ type: 'started', executionId: EXECUTION, status: 'executing' }];
  for (const change of changes) {
    const nodeId = NODES[change.node] ?? 'node-a';
    if (change.kind === 'node') {
      const known = statuses.get(nodeId);
      const status = known === undefined ? 'init' : NEXT[known];
      if (status === undefined) continue;
      statuses.set(nodeId, status);
      events.push(known === undefined ? { type: 'node', executionId: EXECUTION, nodeId, status } : { type: 'node', executionId: EXECUTION, nodeId, status, previous: known });
    } else if (statuses.get(nodeId) === 'executing') {
      // A node writes while it runs (and a read shows the node before its messages).
      const messageId = `${nodeId}-m${change.message}`;
      const content = `${texts.get(messageId) ?? ''}${change.chunk}`;
      texts.set(messageId, content);
      events.push({ type: 'message', executionId: EXECUTION, nodeId, messageId, role: 'ai', delta: change.chunk, reasoningDelta: '', content, reasoningContent: '', replaced: false });
    }
  }
  const result = { executionId: EXECUTION, status: 'finish', endedBy: 'finish', nodes: [], output: [], files: [], failedNodes: [] } as unknown as RunResult;
  events.push({ type: 'status', executionId: EXECUTION, status: 'finish', previous: 'executing' }, { type: 'finished', executionId: EXECUTION, result });
  return events;
}

/** What a poller that takes over gives first: the whole execution restated, as a fresh read of it does. */
function restated(state: RunState): RunEvent[] {
  const events: RunEvent[] = [{ type: 'started', executionId: EXECUTION, status: state.status ?? 'executing' }];
  for (const node of state.nodes) {
    events.push({ type: 'node', executionId: EXECUTION, nodeId: node.nodeId, status: node.status });
    for (const message of node.messages) events.push({ type: 'message', executionId: EXECUTION, nodeId: node.nodeId, messageId: message.messageId, role: 'ai', delta: message.content, reasoningDelta: '', content: message.content, reasoningContent: '', replaced: false });
  }
  return events;
}

const fold = (events: readonly RunEvent[]): RunState => {
  const folded = new RunStateFold();
  for (const event of events) folded.apply(event);
  return folded.state;
};

const shape = (state: RunState): unknown => state.nodes.map((node) => ({ nodeId: node.nodeId, status: node.status, messages: node.messages.map((message) => [message.messageId, message.content]) }));

describe('StreamedRun: what a poller taking over adds to the stream', () => {
  it('a stream written by one poller up to any point, then by a new one from its restating read, tells every change once, in order, and adds up to the same run', () => {
    fc.assert(
      fc.property(fc.array(changeArbitrary, { maxLength: 30 }), fc.nat(), fc.nat(), (changes, cut, lag) => {
        const events = eventsOf(changes);
        // The first poller's last appended event is at `until`; the new one reads the run as it stands at `from` ≥ `until`.
        const until = 1 + (cut % (events.length - 1));
        const from = Math.min(events.length - 1, until + (lag % 3));
        const first = new StreamedRun();
        const stream: RunEvent[] = [];
        for (const event of events.slice(0, until)) {
          const admitted = first.admit(event);
          if (admitted !== undefined) stream.push(admitted);
        }
        // The new holder starts from the stream's state, as the lease hands it over.
        const taker = new StreamedRun(fold(stream));
        for (const event of [...restated(fold(events.slice(0, from))), ...events.slice(from)]) {
          const admitted = taker.admit(event);
          if (admitted !== undefined) stream.push(admitted);
        }
        expect(onceInOrder(stream.map((event, index) => ({ seq: index + 1, event })))).toBeUndefined();
        expect(shape(fold(stream))).toEqual(shape(fold(events)));
      }),
      { numRuns: 300 },
    );
  });

  it('passes a poller’s own events through unchanged in the ordinary course', () => {
    const events = eventsOf([
      { kind: 'node', node: 0 },
      { kind: 'node', node: 0 },
      { kind: 'text', node: 0, message: 0, chunk: 'ab' },
      { kind: 'text', node: 0, message: 0, chunk: 'c' },
      { kind: 'node', node: 0 },
    ]);
    const streamed = new StreamedRun();
    expect(events.map((event) => streamed.admit(event))).toEqual(events);
  });

  it('tells a rewritten message as replaced, and a file once per url', () => {
    const streamed = new StreamedRun();
    streamed.admit({ type: 'started', executionId: EXECUTION, status: 'executing' });
    streamed.admit({ type: 'message', executionId: EXECUTION, nodeId: 'n', messageId: 'm', role: 'ai', delta: 'draft', reasoningDelta: '', content: 'draft', reasoningContent: '', replaced: false });
    expect(streamed.admit({ type: 'message', executionId: EXECUTION, nodeId: 'n', messageId: 'm', role: 'ai', delta: 'final', reasoningDelta: '', content: 'final', reasoningContent: '', replaced: false })).toMatchObject({ delta: 'final', replaced: true });
    const file = { type: 'file', executionId: EXECUTION, file: { name: 'a.txt', type: 'text/plain' } } as const;
    expect(streamed.admit(file)).toBe(file);
    expect(streamed.admit(file)).toBeUndefined();
    expect(streamed.admit({ ...file, file: { ...file.file, url: 'https://files.test/a.txt' } })).toBeDefined();
  });
});
