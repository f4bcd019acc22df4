import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { type RunningProcess, scrubbedEnv, startProcess } from '../cli/support/child-process.js';
import { eventually, LONG, MAIN, NOTES, ROOT } from './support.js';

// `flowstream mcp --http` as a child process on an ephemeral loopback port, driven by the SDK's own
// Streamable HTTP client with the bearer token, against an emulator of this process (time 50×).

const TOKEN = 'a-token-for-this-test-only';

let emulator: Emulator;
let server: RunningProcess;
let endpoint = '';

beforeAll(async () => {
  emulator = await createEmulator({ speed: 50, rateLimit: false, samples: false, workflows: [NOTES, LONG] });
  server = startProcess(process.execPath, ['--import', 'tsx', MAIN, 'mcp', '--http', '--port', '0', '--workflow', 'c-test-notes:notes', '--workflow', 'c-test-long:long_survey'], {
    env: scrubbedEnv({ FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url, FLOWSTREAM_MCP_TOKEN: TOKEN }),
    cwd: ROOT,
  });
  const [, url = ''] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/u, 20_000);
  endpoint = url;
}, 30_000);

afterAll(async () => {
  server.child.kill('SIGTERM');
  // SIGTERM stops the server: it closes its sessions and exits 0.
  expect(await server.exited()).toBe(0);
  expect(server.stderr()).toContain('flowstream mcp: stopping (SIGTERM)');
  await emulator.close();
});

/** A request whose Host header this test chooses (fetch sets its own). */
function postWithHost(host: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(endpoint, { method: 'POST', headers: { Host: host, Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', reject);
    request.end(body);
  });
}

describe('flowstream mcp --http', { timeout: 30_000 }, () => {
  it('refuses a request without the bearer token, with another one, or for another host', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const without = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(initialize) });
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await fetch(endpoint, { method: 'POST', headers: { ...headers, Authorization: 'Bearer not-the-token' }, body: JSON.stringify(initialize) });
    expect(wrong.status).toBe(401);
    // A page that rebinds its own name to 127.0.0.1 sends its name as Host.
    expect(await postWithHost(`evil.example:${new URL(endpoint).port}`, JSON.stringify(initialize))).toBe(403);
  });

  it('serves the tools over Streamable HTTP with the token, progress notifications included', async () => {
    const client = new Client({ name: 'flowstream-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    try {
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'notes')?.inputSchema).toMatchObject({ required: ['topic'] });
      const progress: Progress[] = [];
      const result = await client.callTool({ name: 'notes', arguments: { topic: 'tides' } }, undefined, {
        onprogress: (notice) => {
          progress.push(notice);
        },
      }) as CallToolResult;
      expect(result.isError).toBeUndefined();
      expect(result.content).toContainEqual(expect.objectContaining({ type: 'resource_link', name: 'notes.md' }));
      expect(progress.map((notice) => notice.message)).toContain('Write notes: finish');
    } finally {
      await client.close();
    }
    expect(server.stderr()).not.toContain(emulator.apiKey);
  });
  /** A client of the server over Streamable HTTP, with the token. */
  async function connected(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client({ name: 'flowstream-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    await client.connect(transport);
    return { client, transport };
  }

  /** Calls `long_survey` and resolves with its execution id once the run is executing; `signal` may cancel the call. */
  function surveyExecuting(client: Client, signal?: AbortSignal): { readonly executing: Promise<string>; readonly call: Promise<unknown> } {
    let executionId = '';
    let executing!: (id: string) => void;
    const seen = new Promise<string>((resolve) => {
      executing = resolve;
    });
    const call = client.callTool({ name: 'long_survey', arguments: {} }, undefined, {
      ...(signal === undefined ? {} : { signal }),
      onprogress: (notice) => {
        executionId = /we-[a-z0-9]+/u.exec(notice.message ?? '')?.[0] ?? executionId;
        if (notice.message === 'Survey: executing') executing(executionId);
      },
    });
    return { executing: seen, call };
  }

  /** The execution was aborted exactly once, and nothing of it was read after the abort. */
  function abortedOnce(executionId: string): void {
    const aborts = emulator.requests.list({ endpoint: 'abort', executionId });
    expect(aborts).toHaveLength(1);
    expect(emulator.executions.get(executionId)?.status).toBe('failed');
    expect(emulator.requests.list({ executionId }).filter((request) => request.sequence > aborts[0]!.sequence)).toEqual([]);
  }

  it('aborts the execution once when the caller cancels the call mid-run', async () => {
    const { client } = await connected();
    try {
      const cancel = new AbortController();
      const survey = surveyExecuting(client, cancel.signal);
      const executionId = await survey.executing;
      cancel.abort();
      await expect(survey.call).rejects.toThrow();
      await eventually(() => emulator.requests.list({ endpoint: 'abort', executionId }).length > 0);
      // The session answers on, and the abort stays one.
      await client.listTools();
      abortedOnce(executionId);
    } finally {
      await client.close();
    }
  });

  it('aborts the execution once when the client ends its session mid-run', async () => {
    const { client, transport } = await connected();
    const survey = surveyExecuting(client);
    survey.call.catch(() => undefined);
    const executionId = await survey.executing;
    // DELETE with the session id: the session ends, and its calls with it.
    await transport.terminateSession();
    await client.close();
    await eventually(() => emulator.requests.list({ endpoint: 'abort', executionId }).length > 0);
    // Another session is served as before.
    const other = await connected();
    await other.client.listTools();
    await other.client.close();
    abortedOnce(executionId);
  });
});

describe('flowstream mcp --http, told to stop', () => {
  it('stops on SIGHUP (a closed terminal) as on SIGTERM, closing its sessions, and exits 0', { timeout: 30_000 }, async () => {
    const other = startProcess(process.execPath, ['--import', 'tsx', MAIN, 'mcp', '--http', '--port', '0'], {
      env: scrubbedEnv({ FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url, FLOWSTREAM_MCP_TOKEN: TOKEN }),
      cwd: ROOT,
    });
    await other.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+\/mcp/u, 20_000);
    other.child.kill('SIGHUP');
    expect(await other.exited()).toBe(0);
    expect(other.stderr()).toContain('flowstream mcp: stopping (SIGHUP)');
  });
});
