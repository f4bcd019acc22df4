import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { createHttpClient } from '../../src/http/client.js';
import { clientFor } from './support/client.js';
import { API_KEY, json, startServer } from './support/loopback-server.js';

function everyView(value: unknown): string {
  return [String(value), inspect(value, { depth: 10, showHidden: true, getters: true }), (JSON.stringify(value) as string | undefined) ?? '', value instanceof Error ? (value.stack ?? '') : ''].join('\n');
}

describe('the API key never shows', () => {
  it('not in the client, inspected deeply, stringified or serialised', () => {
    const client = createHttpClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:9/v1' });
    expect(everyView(client)).not.toContain(API_KEY);
    expect(everyView(client.executions)).not.toContain(API_KEY);
  });

  it('not in any error, even when the server echoes it, nor in its cause', async () => {
    const server = await startServer((request, response, index) => {
      const echoed = String(request.headers.authorization);
      if (index === 0) json(response, 401, { statusCode: 401, message: `Invalid API key ${echoed}`, error: 'Unauthorized' });
      else if (index === 1) json(response, 200, { success: false, errCode: 'E0004', errMsg: echoed });
      else if (index === 2) { response.writeHead(500); response.end(`trace: ${echoed}`); }
      else if (index === 3) {
        // JSON-escaped: the raw text does not hold the key, the parsed message does.
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(`{"statusCode":401,"message":"Invalid API key ${echoed.replace('Bearer rf_', 'Bearer \\u0072f_')}","error":"Unauthorized"}`);
      }
      else response.socket?.destroy();
    });
    const client = clientFor(server.origin, { retry: false, timeoutMs: 200 });
    const calls = [client.workflows.get('c-1'), client.workflows.get('c-1'), client.workflows.get('c-1'), client.workflows.get('c-1'), client.executions.start('c-1')];
    const errors = await Promise.all(calls.map((p) => p.catch((e: unknown) => e)));
    for (const error of errors) {
      expect(error).toBeInstanceOf(Error);
      expect(everyView(error)).not.toContain(API_KEY);
    }
    expect((errors[0] as Error).message).toContain('[redacted]');
    expect((errors[3] as Error).message).toContain('Invalid API key Bearer [redacted]');
  });

  it('not in timeout errors (ky’s own timeout error holds the request and is not kept)', async () => {
    const server = await startServer(() => undefined);
    const error: unknown = await clientFor(server.origin, { retry: false, timeoutMs: 30 }).executions.status('we-1').catch((e: unknown) => e);
    expect(everyView(error)).not.toContain(API_KEY);
  });

  it('not in log lines', async () => {
    const server = await startServer((_r, response, index) => {
      if (index === 0) { response.writeHead(503); response.end(); }
      else json(response, 200, { success: true, data: { executionId: 'we-1', status: 'running' } });
    });
    const logger = { warn: vi.fn(), debug: vi.fn(), error: vi.fn() };
    const client = clientFor(server.origin, { logger });
    await client.workflows.search().catch(() => undefined);
    await client.executions.start('c-1', { variables: { x: 'of_course' } });
    const lines = [...logger.warn.mock.calls, ...logger.debug.mock.calls, ...logger.error.mock.calls];
    expect(lines.length).toBeGreaterThan(0);
    expect(everyView(lines)).not.toContain(API_KEY);
  });
});
