import { describe, expect, it } from 'vitest';
import { nodeSpans } from '../../examples/web/node-times.js';
import { runPhase } from '../../examples/web/run-view.js';
import { INITIAL_RUN_STATE, type NodeState, type RunState } from '../../src/runs/run-state.js';

const node = (nodeId: string, status: NodeState['status'], elapsedMs?: number): NodeState => ({ nodeId, status, messages: [], text: '', task: true, ...(elapsedMs === undefined ? {} : { elapsedMs }) });
const state = (changes: Partial<RunState>): RunState => ({ ...INITIAL_RUN_STATE, executionId: 'we-1', ...changes });
const aborted = { executionId: 'we-1', status: 'failed', endedBy: 'aborted', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] } as const;

describe('the dashboard\'s run card', () => {
  it('says failed as soon as a task node failed, before the execution\'s status and result say so', () => {
    expect(runPhase(state({ status: 'executing', progress: { succeeded: 0, failed: 0, done: 0, total: 2 } }), false)).toBe('running');
    expect(runPhase(state({ status: 'executing', progress: { succeeded: 0, failed: 1, done: 1, total: 2 } }), false)).toBe('failed');
    expect(runPhase(state({ status: 'failed' }), false)).toBe('failed');
  });

  it('says cancelling from Cancel until the result, then how the run ended', () => {
    expect(runPhase(state({ status: 'executing' }), true)).toBe('cancelling');
    // The abort fails the node: still cancelling until the result says aborted.
    expect(runPhase(state({ status: 'failed', progress: { succeeded: 0, failed: 1, done: 1, total: 1 } }), true)).toBe('cancelling');
    expect(runPhase(state({ status: 'failed', result: aborted }), true)).toBe('aborted');
    expect(runPhase(state({ status: 'failed', result: { ...aborted, endedBy: 'failed' } }), false)).toBe('failed');
  });

  it('lays the timeline out from the nodes\' own times: a child starts when its last parent ended', () => {
    const tasks = [
      { id: 'a', dependentTasks: [] },
      { id: 'b', dependentTasks: [] },
      { id: 'c', dependentTasks: ['a', 'b'] },
      { id: 'd', dependentTasks: ['c'] },
    ];
    const spans = nodeSpans(tasks, state({ nodes: [node('a', 'finish', 5_000), node('b', 'finish', 8_000), node('c', 'executing', 1_000), node('d', 'init')] }));
    expect(Object.fromEntries(spans)).toEqual({
      a: { startMs: 0, endMs: 5_000, ended: true },
      b: { startMs: 0, endMs: 8_000, ended: true },
      c: { startMs: 8_000, endMs: 9_000, ended: false },
    });
  });
});
