import { describe, expect, it } from 'vitest';
import { createManualClock, type Profile } from '../../src/emulator/index.js';
import {
  isAuthenticationError,
  isConflictError,
  isInsufficientCreditsError,
  isInvalidRequestError,
  isNotFoundError,
  isPayloadTooLargeError,
  isPermissionError,
  isRateLimitError,
  isServerError,
} from '../../src/errors/api-errors.js';
import { createHttpClient } from '../../src/http/client.js';
import { downloadFile } from '../../src/http/download.js';
import { emulatorWithClient } from './support/emulator.js';

const PROFILES: readonly Profile[] = ['service', 'spec'];

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => { throw new Error('expected a failure'); },
    (error: unknown) => error,
  );
}

describe.each(PROFILES)('against the emulator, %s profile', (profile) => {
  it('calls every endpoint end to end', async () => {
    const { emulator, client } = await emulatorWithClient({ profile, speed: 200 });
    const found = await client.workflows.search({ keyword: 'linear' });
    expect(found).toEqual([{ canvasId: 'c-sample-linear', title: 'Research brief (linear chain)' }]);
    const plan = await client.workflows.get('c-sample-linear');
    expect(plan.tasks.map((task) => task.title)).toContain('Research');
    const [file] = await client.files.upload([new File(['hello'], 'hello.txt', { type: 'text/plain' })]);
    expect(file?.fileName).toBe('hello.txt');
    const started = await client.executions.start('c-sample-files', { variables: { topic: 'rxjs' } });
    expect(started.status).toBe('executing');
    const snapshot = await client.executions.status(started.executionId);
    expect(snapshot.executionId).toBe(started.executionId);
    expect(snapshot.nodes.length).toBeGreaterThan(0);
    let output = await client.executions.output(started.executionId);
    for (let i = 0; i < 100 && output.files.length === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      output = await client.executions.output(started.executionId);
    }
    expect(output.files.length).toBeGreaterThan(0);
    const blob = await downloadFile(output.files[0]!);
    expect(blob.size).toBeGreaterThan(0);
    await expect(client.executions.abort(started.executionId)).resolves.toBeUndefined();
    const generated = await client.copilot.generate({ query: 'Search the news. Then summarise it.', locale: 'en' });
    expect(generated.workflowPlan.tasks.length).toBeGreaterThan(0);
    expect(emulator.requests.list().every((record) => record.status === 200)).toBe(true);
  });

  it('works through the emulator’s in-process fetch too', async () => {
    const { emulator } = await emulatorWithClient({ profile });
    const client = createHttpClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });
    await expect(client.workflows.get('c-sample-linear')).resolves.toMatchObject({ title: 'Research brief (linear chain)' });
  });

  it('fails a wrong key with AuthenticationError (401)', async () => {
    const { emulator } = await emulatorWithClient({ profile });
    const client = createHttpClient({ apiKey: 'rf_wrongwrongwrongwrongwrongwrong00', baseUrl: emulator.url });
    const error = await failure(client.workflows.search());
    expect(isAuthenticationError(error)).toBe(true);
    expect(error).toMatchObject({ status: 401, errMsg: 'Invalid API key' });
  });

  it('reads an unknown execution as NotFoundError E1021 (HTTP 200 on the service, 404 in the spec)', async () => {
    const { client } = await emulatorWithClient({ profile });
    for (const call of [client.executions.status('we-000000000000000000000000'), client.executions.output('we-000000000000000000000000'), client.executions.abort('we-000000000000000000000000')]) {
      const error = await failure(call);
      expect(isNotFoundError(error)).toBe(true);
      expect(error).toMatchObject({ errCode: 'E1021', status: profile === 'service' ? 200 : 404, executionId: 'we-000000000000000000000000' });
    }
    const canvas = await failure(client.executions.start('c-missing'));
    expect(canvas).toMatchObject({ errCode: 'E1000', code: 'NOT_FOUND' });
    await expect(client.workflows.get('c-missing')).rejects.toMatchObject({ errCode: 'E1000' });
  });

  it('surfaces an identical start within 1 s as ConflictError, sent once (service.md §2.2)', async () => {
    const { emulator, client } = await emulatorWithClient({ profile, clock: createManualClock() });
    await client.executions.start('c-sample-linear', { variables: { topic: 'a' } });
    const error = await failure(client.executions.start('c-sample-linear', { variables: { topic: 'a' } }));
    expect(isConflictError(error)).toBe(true);
    expect(emulator.requests.list({ endpoint: 'run' }).map((record) => record.status)).toEqual([200, 409]);
  });

  it('waits out a 429 and succeeds after the window (service.md §2.1)', async () => {
    // A hand-driven clock: the emulator's minute passes exactly when the client starts waiting for it.
    const clock = createManualClock();
    const logger = { warn: () => undefined, debug: () => { clock.advance(60_000); } };
    const { emulator, client } = await emulatorWithClient({ profile, clock, rateLimit: { perMinute: 2 } }, { logger, retry: { retries: 1, rateLimitWaitMs: 5 } });
    await client.workflows.search();
    await client.workflows.search();
    await expect(client.workflows.search()).resolves.toBeInstanceOf(Array);
    expect(emulator.requests.list({ endpoint: 'search' }).map((record) => record.status)).toEqual([200, 200, 429, 200]);
  });

  it('uploads 12 files in two ordered batches', async () => {
    const { emulator, client } = await emulatorWithClient({ profile });
    const names = Array.from({ length: 12 }, (_, i) => `file-${String(i).padStart(2, '0')}.txt`);
    const uploaded = await client.files.upload(names.map((name) => new File([`content of ${name}`], name)));
    expect(uploaded.map((file) => file.fileName)).toEqual(names);
    expect(new Set(uploaded.map((file) => file.fileKey)).size).toBe(12);
    expect(emulator.requests.list({ endpoint: 'upload' })).toHaveLength(2);
  });

  it('pages through 45 workflows with pageSize 20', async () => {
    const workflows = Array.from({ length: 45 }, (_, i) => ({ canvasId: `c-page-${String(i).padStart(2, '0')}`, title: `Paged ${i}`, nodes: [] }));
    const { emulator, client } = await emulatorWithClient({ profile, samples: false, workflows });
    const seen: string[] = [];
    for await (const workflow of client.workflows.list({ pageSize: 20 })) seen.push(workflow.canvasId);
    expect(seen.sort()).toEqual(workflows.map((w) => w.canvasId).sort());
    expect(emulator.requests.list({ endpoint: 'search' }).map((record) => record.query)).toHaveLength(3);
  });

  it('creates a workflow without canvasId and replaces one with it (service.md §5.3)', async () => {
    const { emulator, client } = await emulatorWithClient({ profile });
    const before = emulator.workflows.list().length;
    const created = await client.copilot.generate({ query: 'Search the web. Then write a summary.' });
    expect(emulator.workflows.list()).toHaveLength(before + 1);
    expect(created.canvasId).not.toBe('c-sample-linear');
    const replaced = await client.copilot.generate({ query: 'Draw an image of a cat.', canvasId: 'c-sample-linear' });
    expect(replaced.canvasId).toBe('c-sample-linear');
    expect(emulator.workflows.list()).toHaveLength(before + 1);
    const plan = await client.workflows.get('c-sample-linear');
    expect(plan.tasks.map((task) => task.title)).toEqual(replaced.workflowPlan.tasks.map((task) => task.title));
  });

  it('maps a copilot replacement of an unknown canvas (400 on the service, 404 in the spec)', async () => {
    const { client } = await emulatorWithClient({ profile });
    const error = await failure(client.copilot.generate({ query: 'x y', canvasId: 'c-missing' }));
    expect(profile === 'service' ? isInvalidRequestError(error) : isNotFoundError(error)).toBe(true);
  });

  it('maps the statuses the service never sends but a client must (service.md §1.4): 402, 403, 413', async () => {
    const { emulator, client } = await emulatorWithClient({ profile });
    emulator.faults.add({ kind: 'status', status: 402, endpoint: 'run', times: 1, body: JSON.stringify({ success: false, errCode: 'INSUFFICIENT_CREDITS', errMsg: 'Insufficient credits' }) });
    expect(isInsufficientCreditsError(await failure(client.executions.start('c-sample-linear')))).toBe(true);
    emulator.faults.add({ kind: 'status', status: 403, endpoint: 'run', times: 1 });
    expect(isPermissionError(await failure(client.executions.start('c-sample-linear', { variables: { a: 1 } })))).toBe(true);
    emulator.faults.add({ kind: 'status', status: 413, endpoint: 'upload', times: 1 });
    expect(isPayloadTooLargeError(await failure(client.files.upload([new File(['x'], 'x.txt')])))).toBe(true);
  });
});

describe.each(PROFILES)('injected faults, %s profile', (profile) => {
  it('retries reads through 5xx, E0000, dropped connections, cut bodies, latency past the timeout and both 429 kinds', async () => {
    const { emulator, client } = await emulatorWithClient({ profile }, { timeoutMs: { detail: 500 }, retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 2, rateLimitWaitMs: 5 } });
    const faults = [
      { kind: 'status', status: 503 },
      { kind: 'internal' },
      { kind: 'drop' },
      { kind: 'malformed' },
      { kind: 'latency', ms: 5_000 },
      { kind: 'rate-limit', variant: 'throttler', retryAfterSeconds: 0 },
      { kind: 'rate-limit', variant: 'account' },
    ] as const;
    for (const fault of faults) {
      emulator.requests.clear();
      const handle = emulator.faults.add({ ...fault, endpoint: 'detail', times: 1 });
      await expect(client.workflows.get('c-sample-linear'), fault.kind).resolves.toMatchObject({ title: 'Research brief (linear chain)' });
      // The fault spoiled the first attempt (it applies once), so the answer came from a retry.
      expect(handle.hits, fault.kind).toBe(1);
      // A delayed request is logged only once the emulator answers it, after the client gave up on it.
      if (fault.kind !== 'latency') expect(emulator.requests.list({ endpoint: 'detail' }).length, fault.kind).toBe(2);
    }
  });

  it('keeps drifted statuses visible instead of failing (unknown status, extra fields)', async () => {
    const { emulator, client } = await emulatorWithClient({ profile });
    const { executionId } = await client.executions.start('c-sample-linear');
    emulator.faults.add({ kind: 'drift', endpoint: 'status', unknownStatus: 'paused' });
    const snapshot = await client.executions.status(executionId);
    expect(snapshot).toMatchObject({ status: 'unknown', rawStatus: 'paused' });
    expect(snapshot.nodes.every((node) => node.status === 'unknown' && node.rawStatus === 'paused')).toBe(true);
  });

  it('gives up with the last typed error when a fault persists', async () => {
    const { emulator, client } = await emulatorWithClient({ profile });
    emulator.faults.add({ kind: 'status', status: 500, endpoint: 'status' });
    const error = await failure(client.executions.status('we-000000000000000000000000'));
    expect(isServerError(error)).toBe(true);
    expect(emulator.requests.list({ endpoint: 'status' })).toHaveLength(4);
  });

  it.each([
    ['a connection dropped after the service handled it', { kind: 'drop', after: true }, 'NETWORK_ERROR', 1],
    ['a connection dropped before', { kind: 'drop' }, 'NETWORK_ERROR', 0],
    ['a 502 after handling', { kind: 'status', status: 502, after: true }, 'SERVER_ERROR', 1],
    ['E0000', { kind: 'internal' }, 'SERVER_ERROR', 0],
    ['a cut body', { kind: 'malformed' }, 'RESPONSE_VALIDATION', 1],
  ] as const)('sends a start once when it meets %s, and says it may have started', async (_label, fault, code, executions) => {
    const { emulator, client } = await emulatorWithClient({ profile });
    emulator.faults.add({ ...fault, endpoint: 'run', times: 1 });
    const error = await failure(client.executions.start('c-sample-linear'));
    expect(error).toMatchObject({ code, mayHaveStarted: true, endpoint: 'run' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.executions.list()).toHaveLength(executions);
  });

  it('retries a start refused with 429, once the window allows', async () => {
    const { emulator, client } = await emulatorWithClient({ profile }, { retry: { retries: 1, maxWaitMs: 5_000 } });
    emulator.faults.add({ kind: 'rate-limit', variant: 'throttler', retryAfterSeconds: 0, endpoint: 'run', times: 1 });
    await expect(client.executions.start('c-sample-linear')).resolves.toMatchObject({ status: 'executing' });
    expect(emulator.requests.list({ endpoint: 'run' }).map((r) => r.status)).toEqual([429, 200]);
    expect(emulator.executions.list()).toHaveLength(1);
  });

  it('reports a persisting 429 as RateLimitError with the counters', async () => {
    const { emulator, client } = await emulatorWithClient({ profile, rateLimit: { perMinute: 1 } }, { retry: { retries: 1, rateLimitWaitMs: 1 } });
    await client.workflows.search();
    const error = await failure(client.workflows.search());
    expect(isRateLimitError(error)).toBe(true);
    expect(error).toMatchObject({ rateLimit: { limitPerMinute: 1, remainingPerMinute: 0 } });
    expect(emulator.requests.list({ endpoint: 'search' })).toHaveLength(3);
  });
});
