import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { scrubbedEnv } from '../cli/support/child-process.js';
import { eventually, LONG, MAIN, NOTES, ROOT } from './support.js';

// `flowstream mcp` as an MCP host runs it: a child process speaking the protocol on stdin/stdout,
// driven by the SDK's own client, against an emulator of this process on 127.0.0.1 (time 50×).

let emulator: Emulator;
let client: Client;
let transport: StdioClientTransport;
let stderr = '';
const transportErrors: Error[] = [];

beforeAll(async () => {
  emulator = await createEmulator({ speed: 50, rateLimit: false, samples: false, workflows: [NOTES, LONG] });
  transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', MAIN, 'mcp', '--workflow', 'c-test-notes:notes', '--workflow', 'c-test-long'],
    env: scrubbedEnv({ FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url }),
    cwd: ROOT,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // A line on stdout that is not a protocol message comes here.
  transport.onerror = (error) => {
    transportErrors.push(error);
  };
  client = new Client({ name: 'flowstream-test', version: '1.0.0' });
  await client.connect(transport);
}, 30_000);

afterAll(async () => {
  await client.close();
  await emulator.close();
});

function text(result: CallToolResult): string {
  return result.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n');
}

describe('flowstream mcp over stdio', { timeout: 30_000 }, () => {
  it('lists the general tools and one per configured workflow, whose input schema is the plan\'s variables', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['search_workflows', 'get_workflow', 'run_workflow', 'notes', 'long_survey']);
    const notes = tools.find((tool) => tool.name === 'notes');
    expect(notes?.description).toContain('c-test-notes');
    expect(notes?.inputSchema).toMatchObject({
      type: 'object',
      properties: { topic: { type: 'string' }, tone: { enum: ['formal', 'casual'] } },
      required: ['topic'],
      additionalProperties: false,
    });
    const run = tools.find((tool) => tool.name === 'run_workflow');
    expect(run?.inputSchema.required).toEqual(['canvasId']);
  });

  it('answers bad input with a tool error and keeps serving', async () => {
    const unknown = await client.callTool({ name: 'notes', arguments: { topik: 'tides' } }) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/topik/u);
    const misspelt = await client.callTool({ name: 'run_workflow', arguments: { canvasId: 'c-test-notes', variables: { topik: 'tides' } } }) as CallToolResult;
    expect(misspelt.isError).toBe(true);
    expect(text(misspelt)).toContain('did you mean `topic`?');
    const wrongType = await client.callTool({ name: 'run_workflow', arguments: { canvasId: 'c-test-notes', variables: { topic: 7 } } }) as CallToolResult;
    expect(wrongType.isError).toBe(true);
    expect(text(wrongType)).toContain('variables.topic');
    const missing = await client.callTool({ name: 'get_workflow', arguments: { canvasId: 'c-nowhere' } }) as CallToolResult;
    expect(missing.isError).toBe(true);
    // Nothing was started for any of them, and the server still answers.
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
    expect((await client.listTools()).tools).toHaveLength(5);
  });

  it('finds and describes workflows', async () => {
    const found = await client.callTool({ name: 'search_workflows', arguments: { keyword: 'research' } }) as CallToolResult;
    expect(JSON.parse(text(found))).toEqual({ page: 1, workflows: [{ canvasId: 'c-test-notes', title: 'Research notes' }] });
    const plan = await client.callTool({ name: 'get_workflow', arguments: { canvasId: 'c-test-notes' } }) as CallToolResult;
    expect(JSON.parse(text(plan))).toMatchObject({ title: 'Research notes', variablesSchema: { required: ['topic'] } });
  });

  it('runs a workflow\'s tool with progress notifications and returns its text and files as resource links', async () => {
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'notes', arguments: { topic: 'tides', tone: 'casual' } }, undefined, {
      onprogress: (notice) => {
        progress.push(notice);
      },
    }) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(text(result)).toMatch(/^Execution we-[a-z0-9]+ of c-test-notes finished\./u);
    expect(text(result)).toContain('## Gather facts\n\nFirst fact found.\n\nSecond fact found.');
    expect(result.content).toContainEqual({ type: 'resource_link', uri: expect.stringContaining('/drive/file/public/') as unknown, name: 'notes.md', mimeType: 'text/markdown', size: 8 });
    const messages = progress.map((notice) => notice.message);
    expect(messages[0]).toMatch(/^Started execution we-/u);
    expect(messages).toContain('Gather facts: finish');
    expect(messages).toContain('First fact found.');
    expect(messages).toContain('Write notes: finish');
    // MCP: the progress of one call only grows.
    for (let index = 1; index < progress.length; index += 1) expect(progress[index]!.progress).toBeGreaterThan(progress[index - 1]!.progress);
    const executionId = /we-[a-z0-9]+/u.exec(text(result))?.[0] ?? '';
    expect(emulator.executions.get(executionId)?.variables).toEqual([
      { name: 'topic', kind: 'text', value: 'tides' },
      { name: 'tone', kind: 'text', value: 'casual' },
    ]);
  });

  it('aborts the execution once when the caller cancels the call mid-run', async () => {
    const cancel = new AbortController();
    const started: string[] = [];
    const call = client.callTool({ name: 'long_survey', arguments: {} }, undefined, {
      signal: cancel.signal,
      onprogress: (notice) => {
        if (notice.message === 'Survey: executing') cancel.abort();
        const id = /we-[a-z0-9]+/u.exec(notice.message ?? '')?.[0];
        if (id !== undefined) started.push(id);
      },
    });
    await expect(call).rejects.toThrow();
    const [executionId = ''] = started;
    await eventually(() => emulator.requests.list({ endpoint: 'abort', executionId }).length > 0);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
    // The server answers on, and the abort stays one: nothing of the execution was read after it.
    await client.listTools();
    const aborts = emulator.requests.list({ endpoint: 'abort', executionId });
    expect(aborts).toHaveLength(1);
    expect(emulator.requests.list({ executionId }).filter((request) => request.sequence > aborts[0]!.sequence)).toEqual([]);
  });

  // Last: it ends the server.
  it('aborts the runs still going, once, when the client closes the connection', async () => {
    let executionId = '';
    const executing = new Promise<void>((resolve) => {
      client.callTool({ name: 'long_survey', arguments: {} }, undefined, {
        onprogress: (notice) => {
          executionId = /we-[a-z0-9]+/u.exec(notice.message ?? '')?.[0] ?? executionId;
          if (notice.message === 'Survey: executing') resolve();
        },
      }).catch(() => undefined);
    });
    await executing;
    // The host ends the server's stdin (and would SIGTERM it 2 s later): the server stops on its own.
    await client.close();
    expect(stderr).toContain('flowstream mcp: stopping (the client closed the connection)');
    // All along, stdout carried protocol messages alone, and nothing showed the key.
    expect(transportErrors).toEqual([]);
    expect(stderr).not.toContain(emulator.apiKey);
    expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
  });
});
