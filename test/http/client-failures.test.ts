import { describe, expect, it } from 'vitest';
import { clockScheduler, createManualClock, driveClock } from '../../src/emulator/index.js';
import { isConflictError, isNotFoundError, isRateLimitError, isServerError } from '../../src/errors/api-errors.js';
import { isNetworkError } from '../../src/errors/transport-errors.js';
import { isResponseValidationError } from '../../src/errors/validation-errors.js';
import { clientFor } from './support/client.js';
import { json, ok, startServer } from './support/loopback-server.js';

const snapshot = { executionId: 'we-1', status: 'finish', nodeExecutions: [] };

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => { throw new Error('expected a failure'); },
    (error: unknown) => error,
  );
}

describe('typed failures', () => {
  it('reads E1021 in an HTTP 200 envelope as NotFoundError carrying the execution id (service.md §1.2)', async () => {
    const server = await startServer((_r, response) => { json(response, 200, { success: false, errCode: 'E1021', errMsg: 'Workflow execution not found, please refresh', traceId: 'tr-9' }); });
    const error = await failure(clientFor(server.origin).executions.status('we-gone'));
    expect(isNotFoundError(error)).toBe(true);
    expect(error).toMatchObject({ endpoint: 'status', status: 200, errCode: 'E1021', traceId: 'tr-9', executionId: 'we-gone' });
    expect(server.requests).toHaveLength(1);
  });

  it('surfaces a 409 duplicate start as ConflictError, without retrying (service.md §2.2)', async () => {
    const server = await startServer((_r, response) => { json(response, 409, { statusCode: 409, message: 'Duplicate request detected. Please wait before retrying.', error: 'Conflict' }); });
    const error = await failure(clientFor(server.origin).executions.start('c-1'));
    expect(isConflictError(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a 200 that is not the envelope, or whose data does not fit', async () => {
    const server = await startServer((_r, response, index) => {
      if (index === 0) json(response, 200, { executionId: 'we-1' });
      else ok(response, { nodeExecutions: [{ status: 'finish' }] });
    });
    const client = clientFor(server.origin);
    const notEnvelope = await failure(client.executions.status('we-1'));
    expect(isResponseValidationError(notEnvelope)).toBe(true);
    const wrongData = await failure(client.executions.status('we-1'));
    expect(wrongData).toMatchObject({ endpoint: 'status', reason: 'schema', issues: [{ path: ['data', 'nodeExecutions', 0, 'nodeId'] }] });
  });
});

describe('retries', () => {
  it('retries a GET through 5xx, E0000 and a dropped connection, then succeeds', async () => {
    const server = await startServer((_r, response, index) => {
      if (index === 0) { response.writeHead(502); response.end('<html>bad gateway</html>'); }
      else if (index === 1) json(response, 200, { success: false, errCode: 'E0000' });
      else if (index === 2) response.socket?.destroy();
      else ok(response, snapshot);
    });
    await expect(clientFor(server.origin).executions.status('we-1')).resolves.toMatchObject({ status: 'finish' });
    expect(server.requests).toHaveLength(4);
  });

  it('retries an unreadable body (cut JSON) on a GET', async () => {
    const server = await startServer((_r, response, index) => {
      if (index === 0) { response.writeHead(200, { 'content-type': 'application/json' }); response.end('{"success":tr'); }
      else ok(response, snapshot);
    });
    await expect(clientFor(server.origin).executions.status('we-1')).resolves.toMatchObject({ status: 'finish' });
  });

  it('throws the last error when the retries are spent, keeping its cause', async () => {
    const server = await startServer((_r, response) => { response.socket?.destroy(); });
    const error = await failure(clientFor(server.origin, { retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 1 } }).executions.output('we-1'));
    expect(isNetworkError(error)).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(server.requests).toHaveLength(3);
  });

  it('waits for Retry-After on a 429 from the IP throttler (bare string body), then succeeds', async () => {
    const server = await startServer((_r, response, index) => {
      if (index === 0) json(response, 429, 'ThrottlerException: Too Many Requests', { 'retry-after': '0' });
      else ok(response, []);
    });
    await expect(clientFor(server.origin).workflows.search()).resolves.toEqual([]);
    expect(server.requests).toHaveLength(2);
  });

  it('waits for the window on an account 429 (no Retry-After, service.md §2.1), then succeeds', async () => {
    const server = await startServer((_r, response, index) => {
      if (index === 0) json(response, 429, { statusCode: 429, message: 'Rate limit exceeded: 100 requests per minute', error: 'Too Many Requests' }, { 'x-ratelimit-remaining-rpm': '0', 'x-ratelimit-remaining-daily': '50' });
      else ok(response, snapshot);
    });
    await expect(clientFor(server.origin).executions.status('we-1')).resolves.toMatchObject({ status: 'finish' });
  });

  it('gives up at once when the daily budget is spent', async () => {
    const server = await startServer((_r, response) => {
      json(response, 429, { statusCode: 429, message: 'Rate limit exceeded: 10000 requests per day', error: 'Too Many Requests' }, { 'x-ratelimit-remaining-daily': '0' });
    });
    const error = await failure(clientFor(server.origin).executions.status('we-1'));
    expect(isRateLimitError(error)).toBe(true);
    expect(error).toMatchObject({ rateLimit: { remainingPerDay: 0 } });
    expect(server.requests).toHaveLength(1);
  });
});

describe('a start is never sent twice after it may have reached the server (service.md §2.2)', () => {
  it('fails a dropped connection once, saying the execution may have started', async () => {
    const server = await startServer((_r, response) => { response.socket?.destroy(); });
    const error = await failure(clientFor(server.origin).executions.start('c-1'));
    expect(isNetworkError(error)).toBe(true);
    expect(error).toMatchObject({ mayHaveStarted: true, endpoint: 'run' });
    expect((error as Error).message).toContain('may have started');
    expect(server.requests).toHaveLength(1);
  });

  it('fails a 5xx once', async () => {
    const server = await startServer((_r, response) => { response.writeHead(503); response.end(); });
    const error = await failure(clientFor(server.origin).executions.start('c-1'));
    expect(isServerError(error)).toBe(true);
    expect(error).toMatchObject({ mayHaveStarted: true });
    expect(server.requests).toHaveLength(1);
  });

  it('fails a timeout once', async () => {
    const server = await startServer(() => undefined);
    // The deadline on a manual clock, run out only once the server has the start: the start may have begun.
    const clock = createManualClock();
    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts += 1;
      return fetch(input, init);
    };
    let error: unknown;
    void failure(clientFor(server.origin, { timeoutMs: { run: 50 }, scheduler: clockScheduler(clock), fetch: counting }).executions.start('c-1')).then((failed) => (error = failed));
    await expect.poll(() => server.requests.length).toBe(1);
    // A retry would wait on this clock too: driven on until the start fails.
    await driveClock(clock, { until: () => error !== undefined });
    expect(error).toMatchObject({ code: 'TIMEOUT', mayHaveStarted: true });
    expect(attempts).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('does retry a 429, which proves the start was refused', async () => {
    const server = await startServer((_r, response, index) => {
      if (index === 0) json(response, 429, 'Too Many Requests', { 'retry-after': '0' });
      else ok(response, { executionId: 'we-1', status: 'running' });
    });
    await expect(clientFor(server.origin, { retry: { ...{ retries: 1, maxWaitMs: 5_000 } } }).executions.start('c-1')).resolves.toMatchObject({ executionId: 'we-1' });
    expect(server.requests).toHaveLength(2);
  });
});
