import { connect } from 'node:net';
import { firstValueFrom, filter } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { isRelayError, type RelayError } from '../../src/errors/relay-error.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { runResult } from '../../src/runs/events.js';
import { allEvents, openWorlds, SECRET } from './harness.js';
import { LONG_BRANCH } from '../support/long-branch.js';

const world = openWorlds();

/** Every response's raw bytes as text, to look for what must never be in one. */
async function rawText(response: Response): Promise<string> {
  return new TextDecoder().decode(await response.arrayBuffer());
}

async function relayErrorOf(promise: Promise<unknown>): Promise<RelayError> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isRelayError(error)) throw new Error(`expected a RelayError, got ${String(error)}`);
  return error;
}

describe('the run relay: who may follow and cancel', () => {
  it('refuses a missing token (401), forged, expired, other-execution and read-only-cancel tokens (403), an unknown execution (404)', async () => {
    const { client, emulator, token, eventsUrl, base, view } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const forged = await createRunTokens({ secret: 'another secret, also thirty-two bytes long' }).sign({ executionId, scope: ['read', 'cancel'], ttlMs: 60_000 });
    const expired = await token(executionId, ['read'], 1);
    const other = await token('we-another');
    const readOnly = await token(executionId);
    const unknown = await token('we-unknown');
    const get = (url: string, bearer?: string): Promise<Response> => fetch(url, bearer === undefined ? {} : { headers: { authorization: `Bearer ${bearer}` } });
    const answers = [
      [await get(eventsUrl(executionId)), 401, 'UNAUTHORIZED'],
      [await get(eventsUrl(executionId), forged), 403, 'RUN_TOKEN'],
      [await get(eventsUrl(executionId), expired), 403, 'RUN_TOKEN'],
      [await get(eventsUrl(executionId), other), 403, 'RUN_TOKEN'],
      [await get(`${eventsUrl(executionId)}?token=${other}`), 403, 'RUN_TOKEN'],
      [await fetch(`${base}/executions/${executionId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${readOnly}` } }), 403, 'RUN_TOKEN'],
      [await get(eventsUrl('we-unknown'), unknown), 404, 'NOT_FOUND'],
    ] as const;
    for (const [response, status, error] of answers) {
      expect(response.status).toBe(status);
      const text = await rawText(response);
      expect(JSON.parse(text)).toEqual({ error, message: expect.any(String) as unknown });
      expect(text).not.toContain(emulator.apiKey);
      expect(text).not.toMatch(/\bat .+:\d+:\d+/u);
    }
    expect((await relayErrorOf(allEvents(view(executionId, forged)))).status).toBe(403);
    expect((await relayErrorOf(allEvents(view('we-unknown', unknown)))).status).toBe(404);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });

  it('cancels with a cancel token: aborts exactly once however many ask, answers the result, and every viewer sees it end aborted', async () => {
    const { client, emulator, token, base, view } = await world();
    // A 40-minute task: still running when the cancels come, however slow the machine.
    const { executionId } = await client.executions.start('c-sample-timeout');
    const canceller = await token(executionId, ['read', 'cancel']);
    const viewer = allEvents(view(executionId, await token(executionId)));
    await firstValueFrom(view(executionId, canceller).pipe(filter((event) => event.type === 'node' && event.status === 'executing')));
    const cancel = (): Promise<Response> => fetch(`${base}/executions/${executionId}/cancel?token=${canceller}`, { method: 'POST' });
    const answers = await Promise.all([cancel(), cancel(), cancel()]);
    const texts = await Promise.all(answers.map(rawText));
    for (const [index, response] of answers.entries()) {
      expect(response.status).toBe(200);
      expect(JSON.parse(texts[index]!)).toMatchObject({ executionId, status: 'failed', endedBy: 'aborted' });
      expect(texts[index]).not.toContain(emulator.apiKey);
    }
    expect((await viewer).at(-1)).toMatchObject({ type: 'finished', result: { endedBy: 'aborted' } });
    const again = await cancel();
    expect(await again.json()).toMatchObject({ executionId, endedBy: 'aborted' });
    expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
  });

  it('answers a cancel of an execution that had already ended with its own ending: a finished one is not aborted, a failed one stays failed', async () => {
    // keepFinishedMs 0: the relay no longer follows an ended execution, so the cancel's follow reads it afresh.
    const { client, emulator, token, base } = await world({ keepFinishedMs: 0 });
    for (const [canvasId, ending] of [['c-sample-empty', 'finish'], ['c-sample-credit', 'failed']] as const) {
      const { executionId } = await client.executions.start(canvasId);
      expect(await runResult(client.watch(executionId, { failOnWorkflowError: false }))).toMatchObject({ endedBy: ending });
      const cancelToken = await token(executionId, ['read', 'cancel']);
      const answer = await fetch(`${base}/executions/${executionId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${cancelToken}` } });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ executionId, status: ending, endedBy: ending });
      if (ending === 'finish') expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(0);
    }
  });

  it('aborts, once, the branches a failed execution left running when a cancel comes after its viewers saw it end', async () => {
    const { client, emulator, token, base, view } = await world();
    const canvasId = emulator.workflows.add(LONG_BRANCH);
    const { executionId } = await client.executions.start(canvasId);
    const cancelToken = await token(executionId, ['read', 'cancel']);
    // service.md §3.3: the execution failed at once; Survey runs on, and the relay still holds the ended follow.
    const seen = await allEvents(view(executionId, cancelToken));
    expect(seen.at(-1)).toMatchObject({ type: 'finished', result: { endedBy: 'failed', runningNodes: [{ nodeId: 'node-survey' }] } });
    const cancel = (): Promise<Response> => fetch(`${base}/executions/${executionId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${cancelToken}` } });
    for (const answer of await Promise.all([cancel(), cancel()])) {
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ executionId, status: 'failed', endedBy: 'failed' });
    }
    expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
  });

  it('starts a run through the start hook and answers its id with a token that follows and cancels it', async () => {
    const { emulator, base, view } = await world({
      start: async (request) => {
        const { topic } = (await request.json()) as { topic?: string };
        return topic === undefined ? new Response('{"error":"BAD_REQUEST","message":"topic?"}', { status: 400 }) : { canvasId: 'c-sample-variables', variables: { topic } };
      },
    });
    const refused = await fetch(`${base}/runs`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(400);
    const started = await fetch(`${base}/runs`, { method: 'POST', body: JSON.stringify({ topic: 'tides' }), headers: { 'content-type': 'application/json' } });
    const text = await rawText(started);
    expect(started.status).toBe(201);
    expect(text).not.toContain(emulator.apiKey);
    const { executionId, token } = JSON.parse(text) as { executionId: string; token: string };
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    const events = await allEvents(view(executionId, token));
    expect(events.at(-1)).toMatchObject({ type: 'finished', executionId, result: { status: 'finish' } });
  });

  it('starts nothing when the start hook decides a token that cannot be signed (400, no run sent)', async () => {
    for (const decision of [{ canvasId: 'c-sample-linear', scope: ['cancel'] as never }, { canvasId: 'c-sample-linear', ttlMs: 0 }]) {
      const { base, emulator } = await world({ start: () => decision });
      const answer = await fetch(`${base}/runs`, { method: 'POST', body: '{}' });
      expect(answer.status).toBe(400);
      expect(await answer.json()).toEqual({ error: 'INVALID_ARGUMENT', message: expect.stringMatching(/scope|ttlMs/u) as unknown });
      expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
    }
  });

  it('aborts the execution it started, once, when its token cannot be signed, and answers the failure', async () => {
    const signing = createRunTokens({ secret: SECRET });
    const { base, emulator } = await world({
      start: () => ({ canvasId: 'c-sample-linear' }),
      tokens: { sign: () => Promise.reject(new Error('the key store is away')), verify: (token, request) => signing.verify(token, request) },
    });
    const answer = await fetch(`${base}/runs`, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(502);
    expect(await answer.json()).toEqual({ error: 'INTERNAL', message: 'The relay failed' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    const executionId = emulator.executions.list()[0]?.executionId ?? '';
    // The answer does not wait for the abort (it goes on through an outage): wait for it to land.
    await vi.waitFor(() => {
      expect(emulator.executions.get(executionId)?.status).toBe('failed');
    });
    expect(emulator.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
  });

  it('answers 404 to POST /runs without a start hook', async () => {
    const { base, emulator } = await world();
    expect((await fetch(`${base}/runs`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
  });
});

describe('the run relay: the event stream on the wire', () => {
  it('numbers events 1, 2, 3…, resumes after Last-Event-ID or ?after=, sends retry, heartbeats and no-buffering headers, and ends after finished', async () => {
    const { client, token, eventsUrl, emulator } = await world({ heartbeatMs: 500, retryMs: 1_500 });
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const whole = await fetch(eventsUrl(executionId), { headers: { authorization: `Bearer ${readToken}` } });
    expect(whole.headers.get('content-type')).toMatch(/^text\/event-stream/u);
    expect(whole.headers.get('cache-control')).toMatch(/no-cache/u);
    expect(whole.headers.get('x-accel-buffering')).toBe('no');
    const text = await rawText(whole);
    expect(text.startsWith('retry: 1500\n\n')).toBe(true);
    expect(text).toContain(': heartbeat\n\n');
    expect(text).not.toContain(emulator.apiKey);
    const ids = [...text.matchAll(/^id: (\d+)$/gmu)].map((match) => Number(match[1]));
    expect(ids).toEqual(ids.map((_, index) => index + 1));
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/^event: finished\n/u);
    const idsAfter = async (init: RequestInit, url: string): Promise<number[]> => [...(await rawText(await fetch(url, init))).matchAll(/^id: (\d+)$/gmu)].map((match) => Number(match[1]));
    const tail = ids.slice(3);
    expect(await idsAfter({ headers: { authorization: `Bearer ${readToken}`, 'last-event-id': '3' } }, eventsUrl(executionId))).toEqual(tail);
    expect(await idsAfter({}, `${eventsUrl(executionId)}?after=3&token=${readToken}`)).toEqual(tail);
    expect((await fetch(`${eventsUrl(executionId)}?after=x&token=${readToken}`)).status).toBe(400);
  });

  it('answers 400 to a request whose Host header makes no URL, and goes on serving', async () => {
    const { base } = await world();
    const { hostname, port } = new URL(base);
    const statusLine = (host: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => socket.write(`GET /flowstream/runs HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('close', () => {
          resolve(text.split('\r\n')[0] ?? '');
        });
        socket.on('error', reject);
      });
    // Each of these used to throw out of the listener: an uncaught TypeError, the server's process down.
    for (const host of ['[::1', 'a:b:c', 'exa mple']) expect(await statusLine(host)).toBe('HTTP/1.1 400 Bad Request');
    expect((await fetch(`${base}/runs`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('answers a CORS preflight and allows only the origins it was given', async () => {
    const { client, token, eventsUrl } = await world({ cors: { origins: ['https://app.example'] } });
    const { executionId } = await client.executions.start('c-sample-empty');
    const preflight = await fetch(eventsUrl(executionId), { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-headers': 'authorization' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/u);
    const readToken = await token(executionId);
    const allowed = await fetch(eventsUrl(executionId), { headers: { origin: 'https://app.example', authorization: `Bearer ${readToken}` } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    await allowed.body?.cancel();
    const other = await fetch(eventsUrl(executionId), { headers: { origin: 'https://evil.example', authorization: `Bearer ${readToken}` } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    await other.body?.cancel();
  });
});
