import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeStatus, RunResult } from '../../src/domain/model.js';
import type { RunEvent } from '../../src/runs/events.js';
import { INITIAL_RUN_STATE, type NodeState, type RunState, RunStateFold } from '../../src/runs/run-state.js';
import { EXECUTION_ID } from './fixtures.js';

/**
 * The state as the events define it, written the plain way (every event rebuilds the lists): what the
 * fold must give, whatever the order and mix of events.
 */
function reference(events: readonly RunEvent[]): RunState {
  let state: RunState = INITIAL_RUN_STATE;
  const withNodes = (nodes: readonly NodeState[]): RunState => {
    const tasks = nodes.filter((node) => node.task);
    const succeeded = tasks.filter((node) => node.status === 'finish').length;
    const failed = tasks.filter((node) => node.status === 'failed').length;
    return { ...state, nodes, progress: { succeeded, failed, done: succeeded + failed, total: tasks.length } };
  };
  for (const event of events) {
    switch (event.type) {
      case 'started':
        state = { ...state, executionId: event.executionId, ...(event.canvasId === undefined ? {} : { canvasId: event.canvasId }), status: event.status };
        break;
      case 'status':
        state = { ...state, status: event.status };
        break;
      case 'node': {
        const known = state.nodes.find((node) => node.nodeId === event.nodeId);
        const seenWorking = event.status !== 'finish' || (event.previous !== undefined && event.previous !== 'finish');
        const next: NodeState = {
          nodeId: event.nodeId,
          ...(event.title === undefined ? {} : { title: event.title }),
          status: event.status,
          ...(event.error === undefined ? {} : { error: event.error }),
          messages: known?.messages ?? [],
          text: known?.text ?? '',
          task: (known?.task ?? false) || seenWorking,
        };
        state = withNodes(known === undefined ? [...state.nodes, next] : state.nodes.map((node) => (node === known ? next : node)));
        break;
      }
      case 'message': {
        const listed = state.nodes.some((node) => node.nodeId === event.nodeId) ? state.nodes : [...state.nodes, { nodeId: event.nodeId, status: 'unknown' as const, messages: [], text: '', task: true }];
        const message = { messageId: event.messageId, role: event.role, content: event.content, reasoningContent: event.reasoningContent };
        state = withNodes(
          listed.map((node) => {
            if (node.nodeId !== event.nodeId) return node;
            const messages = node.messages.some((entry) => entry.messageId === event.messageId)
              ? node.messages.map((entry) => (entry.messageId === event.messageId ? message : entry))
              : [...node.messages, message];
            return { ...node, messages, text: messages.map((entry) => entry.content).join('\n\n'), task: true };
          }),
        );
        break;
      }
      case 'file':
        state = { ...state, files: [...state.files, event.file] };
        break;
      case 'connection':
        // Not drawn here: outages are folded in outage.marble.test.ts.
        break;
      case 'snapshot':
        // Not drawn here: a late subscriber's snapshot is the state itself (readings.property.test.ts).
        state = event.state;
        break;
      case 'finished': {
        const tasks = new Set(event.result.output.map((node) => node.nodeId));
        state = { ...withNodes(state.nodes.map((node) => (node.task || !tasks.has(node.nodeId) ? node : { ...node, task: true }))), status: event.result.status, result: event.result };
        break;
      }
    }
  }
  return state;
}

const nodeIds = fc.constantFrom('n1', 'n2', 'n3', 'n4');
const statuses = fc.constantFrom<NodeStatus>('init', 'waiting', 'executing', 'finish', 'failed', 'unknown');

const eventArb: fc.Arbitrary<RunEvent> = fc.oneof(
  fc.record({ canvasId: fc.option(fc.constant('c-1'), { nil: undefined }), status: fc.constantFrom('executing', 'finish') }).map(
    ({ canvasId, status }): RunEvent => ({ type: 'started', executionId: EXECUTION_ID, ...(canvasId === undefined ? {} : { canvasId }), status }),
  ),
  fc.constantFrom('executing', 'finish', 'failed').map((status): RunEvent => ({ type: 'status', executionId: EXECUTION_ID, status })),
  fc.record({ nodeId: nodeIds, status: statuses, previous: fc.option(statuses, { nil: undefined }), title: fc.option(fc.constantFrom('A', 'B'), { nil: undefined }) }).map(
    ({ nodeId, status, previous, title }): RunEvent => ({ type: 'node', executionId: EXECUTION_ID, nodeId, status, ...(previous === undefined ? {} : { previous }), ...(title === undefined ? {} : { title }) }),
  ),
  fc.record({ nodeId: nodeIds, messageId: fc.constantFrom('m1', 'm2', 'm3'), content: fc.string({ maxLength: 6 }) }).map(
    ({ nodeId, messageId, content }): RunEvent => ({ type: 'message', executionId: EXECUTION_ID, nodeId, messageId, role: 'ai', delta: content, reasoningDelta: '', content, reasoningContent: '', replaced: false }),
  ),
  fc.constantFrom('a.md', 'b.csv').map((name): RunEvent => ({ type: 'file', executionId: EXECUTION_ID, file: { name, type: 'text/plain' } })),
  fc.subarray(['n1', 'n2', 'n3', 'n4']).map((tasks): RunEvent => {
    const result: RunResult = {
      executionId: EXECUTION_ID,
      status: 'finish',
      endedBy: 'finish',
      nodes: [],
      output: tasks.map((nodeId) => ({ nodeId, status: 'finish', rawStatus: 'finish', messages: [] })),
      files: [],
      failedNodes: [],
      runningNodes: [],
    };
    return { type: 'finished', executionId: EXECUTION_ID, result };
  }),
);

describe('RunStateFold', () => {
  it('gives the state the events define, after every event', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 40 }), (events) => {
        const fold = new RunStateFold();
        events.forEach((event, index) => {
          fold.apply(event);
          expect(fold.state).toEqual(reference(events.slice(0, index + 1)));
        });
      }),
    );
  });

  it('keeps the state object, and each unchanged node object, until an event changes them', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { minLength: 1, maxLength: 30 }), eventArb, (events, last) => {
        const fold = new RunStateFold();
        for (const event of events) fold.apply(event);
        const before = fold.state;
        expect(fold.state).toBe(before);
        fold.apply(last);
        const touched = last.type === 'node' || last.type === 'message' ? last.nodeId : undefined;
        for (const node of fold.state.nodes) {
          const earlier = before.nodes.find((entry) => entry.nodeId === node.nodeId);
          if (earlier !== undefined && node.nodeId !== touched && last.type !== 'finished') expect(node).toBe(earlier);
        }
      }),
    );
  });
});
