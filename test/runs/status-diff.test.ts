import { describe, expect, it } from 'vitest';
import type { NodeExecution } from '../../src/domain/model.js';
import { diffOutput, diffStatus, initialView } from '../../src/runs/execution-view.js';
import { EXECUTION_ID, message, node, output, outputNode, snapshot } from './fixtures.js';

const odd = (nodeId: string, rawStatus: string): NodeExecution => ({ nodeId, status: 'unknown', rawStatus, title: `Title ${nodeId}` });

describe('diffStatus', () => {
  it('gives one event, from init, for a node that finished between two polls', () => {
    const first = diffStatus(initialView(EXECUTION_ID, 'executing'), snapshot('executing', [node('n1', 'init')]));
    const second = diffStatus(first.view, snapshot('executing', [node('n1', 'finish')]));
    expect(second.events).toEqual([{ type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'finish', previous: 'init' }]);
  });

  it('emits the status change before the node changes, nodes in the reading order', () => {
    const first = diffStatus(initialView(EXECUTION_ID, 'executing'), snapshot('executing', [node('a', 'executing'), node('b', 'init')]));
    const { events } = diffStatus(first.view, snapshot('failed', [node('a', 'failed'), node('b', 'executing')]));
    expect(events.map((event) => (event.type === 'node' ? `${event.nodeId}:${event.status}` : event.type === 'status' ? `status:${event.status}` : event.type))).toEqual([
      'status:failed',
      'a:failed',
      'b:executing',
    ]);
  });

  it('a read that changes nothing keeps the view it was compared with: a watched run copies no node map or set per quiet poll', () => {
    const first = diffStatus(initialView(EXECUTION_ID), snapshot('executing', [node('a', 'executing'), node('b', 'init')]));
    const quiet = diffStatus(first.view, snapshot('executing', [node('a', 'executing'), node('b', 'init')]));
    expect(quiet.events).toEqual([]);
    expect(quiet.view.nodes).toBe(first.view.nodes);
    expect(quiet.view.reported).toBe(first.view.reported);
    // A fresher title is no change of status, but the view takes it in.
    const retitled = diffStatus(quiet.view, snapshot('executing', [{ ...node('a', 'executing'), title: 'Search again' }, node('b', 'init')]));
    expect(retitled.events).toEqual([]);
    expect(retitled.view.nodes.get('a')?.title).toBe('Search again');
    expect(first.view.nodes.get('a')?.title).toBe('Title a');
  });

  it('ignores a node going backwards and logs it once', () => {
    const first = diffStatus(initialView(EXECUTION_ID), snapshot('executing', [node('n1', 'finish')]));
    const stale = diffStatus(first.view, snapshot('executing', [node('n1', 'executing')]));
    expect(stale.events).toEqual([]);
    expect(stale.view.nodes.get('n1')?.status).toBe('finish');
    expect(stale.warnings).toHaveLength(1);
    expect(diffStatus(stale.view, snapshot('executing', [node('n1', 'executing')])).warnings).toEqual([]);
  });

  it('carries unknown statuses through without losing the known ones, logging each raw value once per node', () => {
    const first = diffStatus(initialView(EXECUTION_ID), snapshot('executing', [odd('n1', 'paused'), node('n2', 'executing')]));
    expect(first.events.filter((event) => event.type === 'node').map((event) => event.status)).toEqual(['unknown', 'executing']);
    expect(first.warnings).toEqual([{ message: 'Unknown node status', meta: { executionId: EXECUTION_ID, nodeId: 'n1', status: 'paused' } }]);

    const second = diffStatus(first.view, snapshot('executing', [odd('n1', 'paused'), odd('n2', 'paused')]));
    expect(second.events).toEqual([]);
    expect(second.view.nodes.get('n2')?.status).toBe('executing');
    expect(second.warnings).toHaveLength(1);

    const third = diffStatus(second.view, snapshot('executing', [node('n1', 'finish'), node('n2', 'executing')]));
    expect(third.events).toMatchObject([{ nodeId: 'n1', status: 'finish', previous: 'unknown' }]);
  });

  it('keeps the known execution status over an unknown one, logging it once', () => {
    const first = diffStatus(initialView(EXECUTION_ID, 'executing'), { ...snapshot('unknown'), rawStatus: 'paused' });
    expect(first.events).toEqual([]);
    expect(first.view.status).toBe('executing');
    expect(first.warnings).toHaveLength(1);
    expect(diffStatus(first.view, { ...snapshot('unknown'), rawStatus: 'paused' }).warnings).toEqual([]);
  });
});

describe('diffOutput', () => {
  it('delivers a message of an unknown type as the AI’s, logging the type once', () => {
    const unknown = { ...message('m1', 'hi'), type: 'unknown' as const, rawType: 'system' };
    const { events, warnings } = diffOutput(initialView(EXECUTION_ID), output([outputNode('n1', 'executing', [unknown])]));
    expect(events).toMatchObject([{ type: 'node', nodeId: 'n1', status: 'executing' }, { type: 'message', role: 'ai', delta: 'hi' }]);
    expect(warnings).toHaveLength(1);
  });

  it('keeps a message that a later reading leaves out', () => {
    const first = diffOutput(initialView(EXECUTION_ID), output([outputNode('n1', 'executing', [message('m1', 'hi')])]));
    const second = diffOutput(first.view, output([outputNode('n1', 'executing')]));
    expect(second.events).toEqual([]);
    expect(second.view.messages.size).toBe(1);
  });
});
