import { describe, expect, it } from 'vitest';
import { SAMPLE_WORKFLOWS, WorkflowDefinitionError, parseWorkflowDefinition } from '../../src/emulator/index.js';

const expectInvalid = (definition: unknown, message: RegExp): void => {
  expect(() => parseWorkflowDefinition(definition)).toThrow(WorkflowDefinitionError);
  expect(() => parseWorkflowDefinition(definition)).toThrow(message);
};

describe('workflow definitions', () => {
  it('parses every sample', () => {
    const ids = SAMPLE_WORKFLOWS.map((definition) => parseWorkflowDefinition(definition).canvasId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(7);
  });

  it('fills in the defaults and orders nodes parents first', () => {
    const workflow = parseWorkflowDefinition(
      JSON.parse('{"nodes":[{"id":"node-b","parents":["node-a"],"messages":[{"content":"x"},{"content":"y"}]},{"id":"node-a","type":"start"}],"variables":[{"name":"v"}]}'),
    );
    expect(workflow.canvasId).toMatch(/^c-/);
    expect(workflow.title).toBe('');
    expect(workflow.nodes.map((node) => node.id)).toEqual(['node-a', 'node-b']);
    expect(workflow.nodes[1]).toMatchObject({ type: 'task', title: 'node-b', prompt: 'node-b', durationMs: 5_000, toolsets: [] });
    expect(workflow.nodes[1]?.messages.map((message) => [message.atMs, message.reasoning, message.type])).toEqual([
      [2_500, '', 'ai'],
      [5_000, '', 'ai'],
    ]);
    expect(workflow.variables).toEqual([{ name: 'v', variableType: 'string', required: false, options: [] }]);
  });

  it('takes a coefficient of variation for task durations, 0 when absent', () => {
    const workflow = parseWorkflowDefinition({ nodes: [{ id: 'node-start', type: 'start' }, { id: 'a', durationMs: 60_000, durationCv: 0.6 }, { id: 'b' }] });
    expect(Object.fromEntries(workflow.nodes.map((node) => [node.id, node.durationCv]))).toEqual({ 'node-start': 0, a: 0.6, b: 0 });
  });

  it('refuses a coefficient of variation that is negative, not a finite number, above 3, or on a no-work node', () => {
    expectInvalid({ nodes: [{ id: 'a', durationCv: -0.1 }] }, /durationCv/);
    expectInvalid({ nodes: [{ id: 'a', durationCv: Number.NaN }] }, /durationCv/);
    expectInvalid({ nodes: [{ id: 'a', durationCv: Number.POSITIVE_INFINITY }] }, /durationCv/);
    expectInvalid({ nodes: [{ id: 'a', durationCv: 3.5 }] }, /durationCv/);
    expectInvalid({ nodes: [{ id: 'a', durationCv: '0.3' }] }, /durationCv/);
    expectInvalid({ nodes: [{ id: 'a', type: 'memo', durationCv: 0.3 }] }, /does no work/);
  });

  it('refuses duplicate node ids', () => {
    expectInvalid({ nodes: [{ id: 'a' }, { id: 'a' }] }, /duplicate node id "a"/);
  });

  it('refuses unknown parents and self-dependencies', () => {
    expectInvalid({ nodes: [{ id: 'a', parents: ['ghost'] }] }, /unknown parent "ghost"/);
    expectInvalid({ nodes: [{ id: 'a', parents: ['a'] }] }, /depends on itself/);
  });

  it('refuses cycles, naming the nodes caught in them', () => {
    expectInvalid({ nodes: [{ id: 'a', parents: ['c'] }, { id: 'b', parents: ['a'] }, { id: 'c', parents: ['b'] }, { id: 'd' }] }, /cycle among nodes a, b, c/);
  });

  it('refuses bad shapes with the path of the problem', () => {
    expectInvalid({ nodes: [{ id: 'a', durationMs: -1 }] }, /nodes\[0\]\.durationMs|durationMs/);
    expectInvalid({ nodes: [{ id: 'a', duration: 5 }] }, /duration/);
    expectInvalid({ nodes: 'none' }, /nodes/);
    expectInvalid({ nodes: [{ id: 'a', failure: { kind: 'boom' } }] }, /failure/);
  });

  it('refuses timings outside the node and work on no-work nodes', () => {
    expectInvalid({ nodes: [{ id: 'a', durationMs: 1_000, messages: [{ content: 'x', atMs: 2_000 }] }] }, /timed after the node ends/);
    expectInvalid({ nodes: [{ id: 'a', messages: [{ content: 'x', atMs: 2_000 }, { content: 'y', atMs: 1_000 }] }] }, /in time order/);
    expectInvalid({ nodes: [{ id: 'a', durationMs: 1_000, failure: { kind: 'error', atMs: 2_000 } }] }, /fails after/);
    expectInvalid({ nodes: [{ id: 'a', type: 'start', durationMs: 1_000 }] }, /does no work/);
    expectInvalid({ nodes: [], variables: [{ name: 'v' }, { name: 'v' }] }, /duplicate variable "v"/);
  });
});
