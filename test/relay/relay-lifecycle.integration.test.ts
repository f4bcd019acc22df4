import { filter, firstValueFrom, timer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { isRelayError } from '../../src/errors/relay-error.js';
import { allEvents, openWorlds } from './harness.js';

const world = openWorlds();

describe('the run relay: the life of a follow', () => {
  it('tells every viewer when its follow fails (RelayError 502 with the cause\'s code, no key), and follows afresh for the next viewer', async () => {
    const { client, emulator, token, view } = await world();
    // A 40-minute task: still running whenever the fault comes, however slow the machine.
    const { executionId } = await client.executions.start('c-sample-timeout');
    const readToken = await token(executionId);
    const viewers = [allEvents(view(executionId, readToken)), allEvents(view(executionId, readToken))];
    await firstValueFrom(view(executionId, readToken).pipe(filter((event) => event.type === 'node')));
    const fault = emulator.faults.add({ kind: 'status', status: 401, endpoint: 'status' });
    for (const outcome of await Promise.allSettled(viewers)) {
      const error: unknown = outcome.status === 'rejected' ? outcome.reason : undefined;
      expect(isRelayError(error) && error.status === 502 && error.reason === 'AUTHENTICATION').toBe(true);
      expect(JSON.stringify(error) + String(error)).not.toContain(emulator.apiKey);
    }
    fault.remove();
    // The failed follow was forgotten: a new viewer starts a new one (reading the service again), from its `started`.
    const reads = emulator.requests.list({ endpoint: 'status', executionId }).length;
    expect(await firstValueFrom(view(executionId, readToken))).toMatchObject({ type: 'started', executionId, status: 'executing' });
    expect(emulator.requests.list({ endpoint: 'status', executionId }).length).toBeGreaterThan(reads);
  });

  it('keeps a finished execution for late viewers (no new reads), and forgets it at once with keepFinishedMs: 0', async () => {
    for (const [keepFinishedMs, newReads] of [[60_000, false], [0, true]] as const) {
      const { client, emulator, token, view } = await world({ keepFinishedMs });
      const { executionId } = await client.executions.start('c-sample-empty');
      const readToken = await token(executionId);
      const first = await allEvents(view(executionId, readToken));
      const reads = emulator.requests.list({ endpoint: 'status', executionId }).length;
      const late = await allEvents(view(executionId, readToken));
      expect(late.map((event) => event.type)).toEqual(first.map((event) => event.type));
      expect(emulator.requests.list({ endpoint: 'status', executionId }).length > reads).toBe(newReads);
    }
  });

  it('close() ends every open stream, stops following, and answers 503 from then on', async () => {
    const { client, relay, emulator, token, eventsUrl } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const stream = await fetch(eventsUrl(executionId), { headers: { authorization: `Bearer ${readToken}` } });
    const text = stream.text();
    relay.close();
    expect(await text).not.toContain('event: finished');
    // A read already on the wire at close may still arrive: counted after half a second of emulator time.
    await firstValueFrom(timer(500, emulator.scheduler));
    const reads = emulator.requests.list({ endpoint: 'status', executionId }).length;
    const after = await fetch(eventsUrl(executionId), { headers: { authorization: `Bearer ${readToken}` } });
    expect(after.status).toBe(503);
    expect(await after.json()).toEqual({ error: 'RELAY_CLOSED', message: expect.any(String) as unknown });
    // 20 s of emulator time, past the execution's end: the relay made no read after close.
    await firstValueFrom(timer(20_000, emulator.scheduler));
    expect(emulator.requests.list({ endpoint: 'status', executionId })).toHaveLength(reads);
    expect(emulator.executions.get(executionId)?.status).toBe('finish');
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });
});

describe('the run relay: a viewer that stops reading', () => {
  it('reads on at its own pace: after the run ended unread, it still gets every event in order through finished', async () => {
    const { client, relay, token, eventsUrl, view } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const stalled = await relay.fetch(new Request(eventsUrl(executionId), { headers: { authorization: `Bearer ${readToken}` } }));
    const log = await allEvents(view(executionId, readToken));
    const text = await stalled.text();
    expect([...text.matchAll(/^id: (\d+)$/gmu)].map((match) => Number(match[1]))).toEqual(log.map((_, index) => index + 1));
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/^event: finished\n/u);
  });

  it('gives a viewer resuming on a long history every event after its id, none twice', async () => {
    const { client, token, eventsUrl, view, emulator } = await world();
    const chatty = emulator.workflows.add({
      canvasId: 'c-chatty',
      title: 'Many long messages',
      nodes: [
        { id: 'node-start', type: 'start' },
        { id: 'node-talk', parents: ['node-start'], durationMs: 6_000, messages: Array.from({ length: 30 }, (_, index) => ({ content: `${index}: ${'words '.repeat(800)}` })) },
      ],
    });
    const { executionId } = await client.executions.start(chatty);
    const readToken = await token(executionId);
    const log = await allEvents(view(executionId, readToken));
    const rest = await (await fetch(`${eventsUrl(executionId)}?after=2&token=${readToken}`)).text();
    expect(rest.length).toBeGreaterThan(100_000);
    expect([...rest.matchAll(/^id: (\d+)$/gmu)].map((match) => Number(match[1]))).toEqual(log.slice(2).map((_, index) => index + 3));
  });
});
