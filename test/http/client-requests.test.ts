import { describe, expect, it, vi } from 'vitest';
import { isTimeoutError } from '../../src/errors/transport-errors.js';
import type { GateReport, GateTicket, RequestGate } from '../../src/domain/requests.js';
import { clientFor } from './support/client.js';
import { API_KEY, ok, startServer } from './support/loopback-server.js';

const snapshot = { executionId: 'we-1', status: 'executing', nodeExecutions: [] };

describe('what the client sends', () => {
  it('authenticates with Bearer, identifies itself, adds custom headers, under the /v1 base', async () => {
    const server = await startServer((_request, response) => { ok(response, snapshot); });
    await clientFor(server.origin, { baseUrl: `${server.origin}/v1/`, headers: { 'x-team': 'ops', Authorization: 'Bearer rf_other' } }).executions.status('we-1');
    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(request?.url).toBe('/v1/openapi/workflow/we-1/status');
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['user-agent']).toMatch(/^flowstream\//);
    expect(request?.headers['x-team']).toBe('ops');
  });

  it('calls every endpoint at its path and method (spec §4)', async () => {
    const answers: Record<string, unknown> = {
      'POST /v1/openapi/workflow/c-1/run': { executionId: 'we-1', status: 'running' },
      'POST /v1/openapi/workflow/we-1/abort': null,
      'GET /v1/openapi/workflow/we-1/status': snapshot,
      'GET /v1/openapi/workflow/we-1/output': { output: [], files: [] },
      'GET /v1/openapi/workflows?keyword=report&order=creationAsc&page=2&pageSize=5': [{ canvasId: 'c-1', title: 'Report' }],
      'GET /v1/openapi/workflows/c-1': { title: 'T', tasks: [] },
      'POST /v1/openapi/files/upload': { files: [{ fileKey: 'of_1', fileName: 'a.txt' }] },
      'POST /v1/openapi/copilot/workflow/generate': { canvasId: 'c-2', workflowPlan: { title: 'T', tasks: [] } },
    };
    const server = await startServer((request, response) => { ok(response, answers[`${request.method} ${request.url}`]); });
    const client = clientFor(server.origin);
    await expect(client.executions.start('c-1')).resolves.toEqual({ executionId: 'we-1', status: 'executing', rawStatus: 'running' });
    await expect(client.executions.abort('we-1')).resolves.toBeUndefined();
    await expect(client.executions.status('we-1')).resolves.toMatchObject({ status: 'executing' });
    await expect(client.executions.output('we-1')).resolves.toEqual({ output: [], files: [] });
    await expect(client.workflows.search({ keyword: 'report', order: 'creationAsc', page: 2, pageSize: 5 })).resolves.toEqual([{ canvasId: 'c-1', title: 'Report' }]);
    await expect(client.workflows.get('c-1')).resolves.toEqual({ title: 'T', tasks: [], variables: [] });
    await expect(client.files.upload([new File(['x'], 'a.txt')])).resolves.toEqual([{ fileKey: 'of_1', fileName: 'a.txt' }]);
    await expect(client.copilot.generate({ query: 'q' })).resolves.toMatchObject({ canvasId: 'c-2' });
    expect(server.requests).toHaveLength(8);
  });

  it('always wraps run variables in {variables} (service.md §5.4), also for no variables', async () => {
    const server = await startServer((_request, response) => { ok(response, { executionId: 'we-1', status: 'running' }); });
    const client = clientFor(server.origin);
    await client.executions.start('c-1');
    await client.executions.start('c-1', { variables: { topic: 'rxjs', n: 2 } });
    expect(server.requests.map((r) => JSON.parse(r.body.toString()) as unknown)).toEqual([{ variables: {} }, { variables: { topic: 'rxjs', n: 2 } }]);
    expect(server.requests[0]?.headers['content-type']).toContain('application/json');
  });

  it('encodes ids as one path segment: `../` cannot escape', async () => {
    const server = await startServer((_request, response) => { ok(response, snapshot); });
    await clientFor(server.origin).executions.status('../../workflows/x?y#z');
    expect(server.requests[0]?.url).toBe('/v1/openapi/workflow/..%2F..%2Fworkflows%2Fx%3Fy%23z/status');
  });

  it('sends copilot replacement only when asked by name, as canvasId (spec §4.8)', async () => {
    const server = await startServer((_request, response) => { ok(response, { canvasId: 'c-9', workflowPlan: { title: 'T', tasks: [] } }); });
    const client = clientFor(server.origin);
    await client.copilot.generate({ query: 'make it', locale: 'de-DE' });
    await client.copilot.generate({ query: 'make it', canvasId: 'c-9' });
    expect(server.requests.map((r) => JSON.parse(r.body.toString()) as unknown)).toEqual([{ query: 'make it', locale: 'de-DE' }, { query: 'make it', canvasId: 'c-9' }]);
  });

  it('leaves the User-Agent to the browser where there is one', async () => {
    vi.stubGlobal('document', {});
    try {
      const fetch = vi.fn<typeof globalThis.fetch>(() => Promise.resolve(Response.json({ success: true, data: snapshot })));
      await clientFor('http://127.0.0.1:9', { fetch }).executions.status('we-1');
      const request = fetch.mock.calls[0]?.[0];
      expect(request).toBeInstanceOf(Request);
      expect((request as Request).headers.get('user-agent')).toBeNull();
      expect((request as Request).headers.get('authorization')).toMatch(/^Bearer rf_/);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('uses the injected fetch', async () => {
    const fetch = vi.fn<typeof globalThis.fetch>(() => Promise.resolve(Response.json({ success: true, data: snapshot })));
    await clientFor('http://127.0.0.1:9', { fetch }).executions.status('we-1');
    expect(fetch).toHaveBeenCalledOnce();
  });
});

describe('gate', () => {
  it('is asked before every attempt, retries included, and told each outcome with the rate-limit headers', async () => {
    const server = await startServer((_request, response, index) => {
      if (index === 0) {
        response.writeHead(503, { 'x-ratelimit-remaining-rpm': '7' });
        response.end();
        return;
      }
      ok(response, snapshot, { 'x-ratelimit-limit-rpm': '100', 'x-ratelimit-remaining-rpm': '6', 'x-ratelimit-limit-daily': '10000', 'x-ratelimit-remaining-daily': '9000' });
    });
    const tickets: GateTicket[] = [];
    const reports: GateReport[] = [];
    const gate: RequestGate = {
      acquire: (ticket) => { tickets.push(ticket); return Promise.resolve(); },
      report: (report) => { reports.push(report); },
    };
    await clientFor(server.origin, { gate }).executions.status('we-1');
    expect(tickets).toEqual([{ endpoint: 'status', priority: 'status', key: 'we-1' }, { endpoint: 'status', priority: 'status', key: 'we-1' }]);
    expect(reports.map((r) => [r.httpStatus, r.rateLimit])).toEqual([
      [503, { remainingPerMinute: 7 }],
      [200, { limitPerMinute: 100, remainingPerMinute: 6, limitPerDay: 10_000, remainingPerDay: 9000 }],
    ]);
  });

  it('ranks endpoints abort > start > interactive (detail, upload, copilot, search) > status and output, and keys starts by canvas and exact body', async () => {
    const server = await startServer((request, response) => {
      ok(response, request.url.endsWith('/run') ? { executionId: 'we-1', status: 'running' } : request.url.endsWith('/output') ? {} : request.url.endsWith('/status') ? snapshot : request.url.includes('workflows/') ? { title: 'T', tasks: [] } : null);
    });
    const tickets: GateTicket[] = [];
    const gate: RequestGate = { acquire: (ticket) => { tickets.push(ticket); return Promise.resolve(); }, report: () => undefined };
    const client = clientFor(server.origin, { gate });
    await client.executions.abort('we-1');
    await client.executions.start('c-1', { variables: { a: 1 } });
    await client.executions.output('we-1');
    await client.workflows.get('c-1');
    expect(tickets).toEqual([
      { endpoint: 'abort', priority: 'abort', key: 'we-1' },
      { endpoint: 'run', priority: 'start', key: 'c-1\n{"variables":{"a":1}}' },
      { endpoint: 'output', priority: 'output', key: 'we-1' },
      { endpoint: 'detail', priority: 'interactive' },
    ]);
  });

  it('puts a call in the class its priority option names, and refuses a class a caller cannot ask for', async () => {
    const server = await startServer((request, response) => {
      ok(response, request.url.endsWith('/status') ? snapshot : []);
    });
    const tickets: GateTicket[] = [];
    const gate: RequestGate = { acquire: (ticket) => { tickets.push(ticket); return Promise.resolve(); }, report: () => undefined };
    const client = clientFor(server.origin, { gate });
    await client.executions.status('we-1', { priority: 'interactive' });
    await client.workflows.search({ keyword: 'nightly' }, { priority: 'status' });
    expect(tickets).toEqual([
      { endpoint: 'status', priority: 'interactive', key: 'we-1' },
      { endpoint: 'search', priority: 'status' },
    ]);
    // Plain JavaScript can pass anything: the classes above interactive are the endpoint's to earn.
    await expect(client.workflows.search({}, { priority: 'abort' } as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options.priority' });
    expect(tickets).toHaveLength(2);
  });

  it('refuses a signal that is not an AbortSignal with InvalidArgumentError, sending nothing', async () => {
    const server = await startServer((_request, response) => { ok(response, []); });
    const client = clientFor(server.origin);
    for (const signal of [{}, true, new AbortController()]) {
      await expect(client.workflows.search({}, { signal } as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options.signal' });
      await expect(client.executions.start('c-1', {}, { signal } as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options.signal' });
    }
    expect(server.requests).toHaveLength(0);
  });

  it('reports a failed attempt with no status, and sends nothing while the gate holds', async () => {
    const server = await startServer((_request, response) => { response.socket?.destroy(); });
    const reports: GateReport[] = [];
    let release: () => void = () => undefined;
    const gate: RequestGate = { acquire: () => new Promise<void>((resolve) => { release = resolve; }), report: (report) => { reports.push(report); } };
    const pending = clientFor(server.origin, { gate, retry: false }).executions.status('we-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(server.requests).toHaveLength(0);
    release();
    await expect(pending).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
    expect(reports).toEqual([{ ticket: { endpoint: 'status', priority: 'status', key: 'we-1' }, httpStatus: undefined, rateLimit: {} }]);
  });
});

describe('cancellation and timeouts', () => {
  it('aborts an in-flight call with the signal’s reason', async () => {
    const server = await startServer(() => undefined); // never answers
    const controller = new AbortController();
    const pending = clientFor(server.origin).executions.status('we-1', { signal: controller.signal });
    await vi.waitFor(() => { expect(server.requests).toHaveLength(1); });
    controller.abort(new Error('user left'));
    await expect(pending).rejects.toThrow('user left');
  });

  it('aborts a retry wait and removes nothing it should keep', async () => {
    const server = await startServer((_request, response) => { response.writeHead(503); response.end(); });
    const controller = new AbortController();
    const client = clientFor(server.origin, { retry: { retries: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    const pending = client.executions.status('we-1', { signal: controller.signal });
    await vi.waitFor(() => { expect(server.requests).toHaveLength(1); });
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(server.requests).toHaveLength(1);
  });

  it('times out per endpoint with a TimeoutError', async () => {
    const server = await startServer(() => undefined);
    const error: unknown = await clientFor(server.origin, { timeoutMs: { status: 50 }, retry: false }).executions.status('we-1').catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    expect(error).toMatchObject({ endpoint: 'status', timeoutMs: 50, executionId: 'we-1' });
  });

  it('times out a body that stalls after the headers, too', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"success":true,'); // and nothing more
    });
    const error: unknown = await clientFor(server.origin, { timeoutMs: { status: 50 }, retry: false }).executions.status('we-1').catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    expect(error).toMatchObject({ endpoint: 'status', timeoutMs: 50 });
  });

  it('rejects with the signal’s reason even when it is not an Error', async () => {
    const server = await startServer(() => undefined);
    const controller = new AbortController();
    const pending = clientFor(server.origin).executions.status('we-1', { signal: controller.signal });
    await vi.waitFor(() => { expect(server.requests).toHaveLength(1); });
    controller.abort('user left');
    await expect(pending).rejects.toBe('user left');
  });
});
