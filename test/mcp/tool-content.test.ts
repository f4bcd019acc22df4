import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/domain/model.js';
import { NotFoundError } from '../../src/errors/index.js';
import { progressText } from '../../src/mcp/run-progress.js';
import { errorToolResult, runToolResult } from '../../src/mcp/tool-result.js';
import { workflowTools } from '../../src/mcp/workflow-tools.js';
import { parseWorkflowFlag, parseWorkflowToolFile } from '../../src/cli/mcp/workflow-tool-config.js';

const finished: RunResult = {
  executionId: 'we-1',
  canvasId: 'c-1',
  status: 'finish',
  endedBy: 'finish',
  nodes: [],
  output: [
    { nodeId: 'node-a', title: 'Gather', status: 'finish', rawStatus: 'finish', messages: [
      { messageId: 'am-1', type: 'ai', rawType: 'ai', content: 'One.', reasoningContent: '' },
      { messageId: 'am-2', type: 'ai', rawType: 'ai', content: '  ', reasoningContent: 'thinking' },
      { messageId: 'am-3', type: 'ai', rawType: 'ai', content: 'Two.', reasoningContent: '' },
    ] },
    { nodeId: 'node-b', status: 'finish', rawStatus: 'finish', messages: [] },
  ],
  files: [
    { name: 'notes.md', type: 'text/markdown', size: 8, url: 'https://host/v1/drive/file/public/df-1/notes.md' },
    { name: 'draft.txt', type: 'text/plain' },
  ],
  failedNodes: [],
  runningNodes: [],
};

describe('a run as a tool result', () => {
  it('gives the text of each node that wrote some, and each file with a URL as a resource link', () => {
    const result = runToolResult(finished);
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([
      { type: 'text', text: 'Execution we-1 of c-1 finished.\n\n## Gather\n\nOne.\n\nTwo.\n\nFiles without a link: draft.txt' },
      { type: 'resource_link', uri: 'https://host/v1/drive/file/public/df-1/notes.md', name: 'notes.md', mimeType: 'text/markdown', size: 8 },
    ]);
  });

  it('is a tool error when the workflow failed, naming the failed nodes and their errors', () => {
    const failedNode = { nodeId: 'node-a', title: 'Gather', status: 'failed', rawStatus: 'failed', error: { message: 'Request timeout.', messages: ['Request timeout.'], raw: '["Request timeout."]' } } as const;
    const result = runToolResult({ ...finished, status: 'failed', endedBy: 'failed', failedNodes: [failedNode], output: [], files: [] });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'Execution we-1 of c-1 failed.\n\nFailed: Gather: Request timeout.' }]);
  });

  it('gives an error\'s message as a tool error, with the execution it concerns', () => {
    const error = new NotFoundError({ endpoint: 'status', status: 200, errCode: 'E1021', errMsg: 'Execution not found', executionId: 'we-9' });
    const result = errorToolResult(error);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('we-9') as unknown });
  });
});

describe('progress notifications of a run', () => {
  it.each([
    [{ type: 'started', executionId: 'we-1', status: 'executing' }, 'Started execution we-1'],
    [{ type: 'node', executionId: 'we-1', nodeId: 'node-a', title: 'Gather', status: 'executing', previous: 'init' }, 'Gather: executing'],
    [{ type: 'node', executionId: 'we-1', nodeId: 'node-a', status: 'failed', error: { message: 'Timeout', messages: ['Timeout'], raw: 'Timeout' } }, 'node-a: failed (Timeout)'],
    [{ type: 'message', executionId: 'we-1', nodeId: 'node-a', messageId: 'am-1', role: 'ai', delta: ' more', reasoningDelta: '', content: 'One more', reasoningContent: '', replaced: false }, ' more'],
    [{ type: 'message', executionId: 'we-1', nodeId: 'node-a', messageId: 'am-1', role: 'ai', delta: 'New', reasoningDelta: '', content: 'New text', reasoningContent: '', replaced: true }, 'New text'],
    [{ type: 'message', executionId: 'we-1', nodeId: 'node-a', messageId: 'am-1', role: 'ai', delta: '', reasoningDelta: 'hm', content: 'One', reasoningContent: 'hm', replaced: false }, undefined],
    [{ type: 'file', executionId: 'we-1', file: { name: 'notes.md', type: 'text/markdown' } }, 'File notes.md'],
    [{ type: 'finished', executionId: 'we-1', result: finished }, undefined],
  ] as const)('tells %j as %j', (event, text) => {
    expect(progressText(event)).toBe(text);
  });
});

describe('configured workflows', () => {
  it('reads --workflow as a canvas id and an optional tool name', () => {
    expect(parseWorkflowFlag('c-1')).toEqual({ canvasId: 'c-1' });
    expect(parseWorkflowFlag('c-1:summarise')).toEqual({ canvasId: 'c-1', tool: 'summarise' });
    expect(() => parseWorkflowFlag(':summarise')).toThrow(/expected a canvas id/u);
    expect(() => parseWorkflowFlag('c-1:')).toThrow(/tool name after ":" is empty/u);
  });

  it('reads a configuration file, and says where one is wrong', () => {
    expect(parseWorkflowToolFile({ workflows: ['c-1', { canvasId: 'c-2', tool: 'two', description: 'Does two.' }] }, 'mcp.json')).toEqual([
      { canvasId: 'c-1' },
      { canvasId: 'c-2', tool: 'two', description: 'Does two.' },
    ]);
    expect(() => parseWorkflowToolFile({ workflows: ['c-1', { canvas: 'c-1' }] }, 'mcp.json')).toThrow(/^mcp\.json is not a flowstream mcp configuration[^\n]*\n {2}workflows\.1\.canvasId: expected a canvas id \(c-…\)\n {2}workflows\.1: unknown "canvas": a canvas id or an object has canvasId, tool and description$/u);
    expect(() => parseWorkflowToolFile({ workflows: ['c 1'] }, 'mcp.json')).toThrow(/workflows\.0: a canvas id has no spaces or colons/u);
    expect(() => parseWorkflowToolFile([], 'mcp.json')).toThrow(/mcp\.json/u);
  });

  it('names each tool as configured or after its workflow\'s title, unique and apart from the general tools', () => {
    const plan = (title: string) => ({ title, tasks: [{ id: 't', title: 'Write', prompt: '', toolsets: [], dependentTasks: [] }], variables: [] });
    const tools = workflowTools(
      [{ canvasId: 'c-1', tool: 'run_workflow' }, { canvasId: 'c-2' }, { canvasId: 'c-3', description: 'Mine.' }, { canvasId: 'c-4' }],
      new Map([['c-1', plan('One')], ['c-2', plan('Weekly Report')], ['c-3', plan('weekly report')], ['c-4', plan(' ')]]),
    );
    expect(tools.map(({ name, canvasId }) => [name, canvasId])).toEqual([['run_workflow_2', 'c-1'], ['weekly_report', 'c-2'], ['weekly_report_2', 'c-3'], ['c-4', 'c-4']]);
    expect(tools[1]?.description).toBe('Runs the hosted workflow "Weekly Report" (c-2) and returns its output text and files. Steps: Write. It takes no input.');
    expect(tools[2]?.description).toBe('Mine.');
  });
});
