import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { isRedirectError, isResponseTooLargeError } from '../../src/errors/transport-errors.js';
import { API_KEY, json, ok, startServer } from '../http/support/loopback-server.js';

// Answers no API gives, from a server on 127.0.0.1: each ends the call with a typed error,
// and nothing of it is followed, kept or sent on.

function clientOf(origin: string, options: { maxResponseBytes?: number } = {}) {
  return createClient({ apiKey: API_KEY, baseUrl: `${origin}/v1`, retry: false, headers: { 'x-team': 'secret-team' }, ...options });
}

describe('a body that inflates without end', () => {
  it('stops reading a gzip bomb at maxResponseBytes and fails with ResponseTooLargeError', async () => {
    // 64 MiB of zeros in a JSON string: about 64 KB on the wire.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"success":true,"data":"'), Buffer.alloc(64 * 1024 * 1024, 0x30), Buffer.from('"}')]), { level: 9 });
    expect(bomb.length).toBeLessThan(100 * 1024);
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(bomb);
    });
    const before = process.memoryUsage().arrayBuffers;
    const error: unknown = await clientOf(server.origin, { maxResponseBytes: 1024 * 1024 }).workflows.search().catch((caught: unknown) => caught);
    expect(isResponseTooLargeError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'RESPONSE_TOO_LARGE', endpoint: 'search', maxBytes: 1024 * 1024 });
    // Not read whole: far less than the 64 MiB the body would inflate to was ever held.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024);
  });

  it('reads an answer up to the limit as usual', async () => {
    const server = await startServer((_request, response) => {
      ok(response, [{ canvasId: 'c-1', title: 'x'.repeat(1000) }]);
    });
    await expect(clientOf(server.origin, { maxResponseBytes: 4096 }).workflows.search()).resolves.toHaveLength(1);
  });
});

describe('a redirect', () => {
  it.each([301, 302, 303, 307, 308])('HTTP %i to another origin is an error, and that origin gets no request, no header, no start', async (status) => {
    const elsewhere = await startServer((_request, response) => {
      ok(response, { executionId: 'we-elsewhere', status: 'running' });
    });
    const server = await startServer((_request, response) => {
      response.writeHead(status, { location: `${elsewhere.origin}/v1/openapi/workflow/c-1/run` });
      response.end();
    });
    const error: unknown = await clientOf(server.origin).executions.start('c-1').catch((caught: unknown) => caught);
    expect(isRedirectError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'UNEXPECTED_REDIRECT', status, location: `${elsewhere.origin}/v1/openapi/workflow/c-1/run`, mayHaveStarted: true });
    expect(elsewhere.requests).toHaveLength(0);
    expect(server.requests).toHaveLength(1);
  });

  it('a redirect loop costs one request, as the budget counts it', async () => {
    const server = await startServer((request, response) => {
      response.writeHead(307, { location: request.url });
      response.end();
    });
    const client = createClient({ apiKey: API_KEY, baseUrl: `${server.origin}/v1` });
    const error: unknown = await client.workflows.get('c-1').catch((caught: unknown) => caught);
    expect(isRedirectError(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(client.budget!.snapshot().usedThisMinute).toBe(1);
  });

  it('still reads a plain answer of the same server', async () => {
    const server = await startServer((_request, response) => {
      json(response, 200, { success: true, data: [] });
    });
    await expect(clientOf(server.origin).workflows.search()).resolves.toEqual([]);
  });
});
