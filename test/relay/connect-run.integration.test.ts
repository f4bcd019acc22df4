import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { filter, firstValueFrom, share } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { clockScheduler, createEmulator, createManualClock, driveClock } from '../../src/emulator/index.js';
import { isRelayError } from '../../src/errors/relay-error.js';
import { createRunRelay } from '../../src/relay/run-relay.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { toNodeListener } from '../../src/relay/node-listener.js';
import { connectRun, reconnectDelay } from '../../src/runs/connect-run.js';
import { allEvents, type RelayWorld, relayWorld, SECRET, withoutConnection } from './harness.js';

const open: RelayWorld[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await Promise.all(open.splice(0).map((world) => world.close()));
});

async function world(): Promise<RelayWorld> {
  const made = await relayWorld();
  open.push(made);
  return made;
}

/** The global fetch, counting the calls made through it. */
function countingFetch(): { readonly fetch: typeof fetch; readonly calls: () => number } {
  let calls = 0;
  return {
    fetch: (input, init) => {
      calls += 1;
      return fetch(input, init);
    },
    calls: () => calls,
  };
}

describe('connectRun', () => {
  it('does not retry a refused token: one request, then RelayError 403', async () => {
    const { client, view } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const counted = countingFetch();
    const error: unknown = await allEvents(view(executionId, 'v1.forged.token', { fetch: counted.fetch })).catch((caught: unknown) => caught);
    expect(isRelayError(error) && error.status === 403 && error.reason === 'RUN_TOKEN').toBe(true);
    expect(counted.calls()).toBe(1);
  });

  it('retries a relay answering 503, says so with connection events, and then follows to the end', async () => {
    const { client, relay, token, emulator } = await world();
    let refusals = 2;
    const relayListener = toNodeListener(relay);
    const flaky = createServer((request, response) => {
      if (refusals > 0) {
        refusals -= 1;
        response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"BUSY","message":"try later"}');
        return;
      }
      relayListener(request, response);
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      flaky.closeAllConnections();
      flaky.close();
    });
    const { executionId } = await client.executions.start('c-sample-linear');
    const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/flowstream/executions/${executionId}/events`;
    const events = await allEvents(connectRun(url, { token: await token(executionId), scheduler: emulator.scheduler }));
    expect(refusals).toBe(0);
    expect(events.slice(0, 3)).toEqual([
      { type: 'connection', executionId, reconnecting: { attempts: 1, failingForMs: 0, error: 'HTTP 503' } },
      { type: 'connection', executionId, reconnecting: { attempts: 2, failingForMs: expect.any(Number) as unknown, error: 'HTTP 503' } },
      { type: 'connection', executionId },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'finished', result: { status: 'finish' } });
  });

  it('errors with WorkflowFailedError after a failed result unless failOnWorkflowError is false, like client.run', async () => {
    const { client, token, view } = await world();
    const { executionId } = await client.executions.start('c-sample-branch-failure');
    const readToken = await token(executionId);
    const error: unknown = await allEvents(view(executionId, readToken, { failOnWorkflowError: true })).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'WorkflowFailedError', result: { executionId, status: 'failed' } });
    expect((await allEvents(view(executionId, readToken))).at(-1)).toMatchObject({ type: 'finished', result: { status: 'failed' } });
  });

  it('pauseWhenHidden: disconnects while the page is hidden and resumes when it shows, missing and repeating nothing', async () => {
    const { client, token, view } = await world();
    const page = Object.assign(new EventTarget(), { visibilityState: 'visible' });
    vi.stubGlobal('document', page);
    cleanups.push(() => vi.unstubAllGlobals());
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const counted = countingFetch();
    const events$ = view(executionId, readToken, { pauseWhenHidden: true, fetch: counted.fetch }).pipe(share());
    const all = allEvents(events$);
    await firstValueFrom(events$.pipe(filter((event) => event.type === 'node' && event.status === 'executing')));
    page.visibilityState = 'hidden';
    page.dispatchEvent(new Event('visibilitychange'));
    const whileHidden = counted.calls();
    // While hidden the run goes on without this viewer: wait (on emulator time) until it has ended.
    await allEvents(view(executionId, readToken));
    expect(counted.calls()).toBe(whileHidden);
    page.visibilityState = 'visible';
    page.dispatchEvent(new Event('visibilitychange'));
    const events = await all;
    expect(counted.calls()).toBe(whileHidden + 1);
    expect(withoutConnection(events)).toEqual(await allEvents(view(executionId, readToken)));
  });

  it('errors at once on an answer that is not an event stream, and refuses a missing token or a bad maxReconnectMs', async () => {
    const { base } = await world();
    const counted = countingFetch();
    // The relay's 404 for a path outside its routes is JSON, not a stream; here it comes with 200 from a page instead.
    const page = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      page.close();
    });
    const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/executions/we-1/events`;
    const error: unknown = await allEvents(connectRun(url, { token: 't', fetch: counted.fetch })).catch((caught: unknown) => caught);
    expect(isRelayError(error) && error.reason === 'NOT_AN_EVENT_STREAM').toBe(true);
    expect(counted.calls()).toBe(1);
    expect(() => connectRun(`${base}/executions/we-1/events`, { token: '' })).toThrow(/token/u);
    expect(() => connectRun(`${base}/executions/we-1/events`, { token: 't', maxReconnectMs: 0 })).toThrow(/maxReconnectMs/u);
  });

  it.each<[string, () => unknown, string]>([
    // Outside a page (Node) a relative address has nothing to resolve against.
    ['an address that is not a URL', () => connectRun('/flowstream/executions/we-1/events', { token: 't' }), 'url'],
    ['an address that is not http', () => connectRun('ftp://127.0.0.1/executions/we-1/events', { token: 't' }), 'url'],
    ['an address that is neither a string nor a URL', () => connectRun(42 as unknown as string, { token: 't' }), 'url'],
    ['a null address', () => connectRun(null as unknown as string, { token: 't' }), 'url'],
    ['null options', () => connectRun('http://127.0.0.1:9/executions/we-1/events', null as never), 'options'],
    ['no options (no token)', () => connectRun('http://127.0.0.1:9/executions/we-1/events', undefined as never), 'token'],
    ['a fetch that is not a function', () => connectRun('http://127.0.0.1:9/executions/we-1/events', { token: 't', fetch: {} as typeof fetch }), 'fetch'],
    ["failOnWorkflowError: 'false'", () => connectRun('http://127.0.0.1:9/executions/we-1/events', { token: 't', failOnWorkflowError: 'false' as never }), 'failOnWorkflowError'],
  ])('refuses %s with InvalidArgumentError at the call', (_name, connect, argument) => {
    expect(connect).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });
});

describe('reconnectDelay', () => {
  it('starts from the relay\'s retry delay, doubles per attempt up to the bound, and draws in the upper half (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 120_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (retryMs, attempt, maxMs, random) => {
        const full = Math.min(maxMs, retryMs * 2 ** (attempt - 1));
        const delay = reconnectDelay(retryMs, attempt, maxMs, random);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(full / 2));
        expect(delay).toBeLessThanOrEqual(full);
      }),
    );
    expect([1, 2, 3, 4, 5, 6].map((attempt) => reconnectDelay(2_000, attempt, 30_000, 0.999_999))).toEqual([2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });
});

describe('connectRun on virtual time', () => {
  it('errors with the relay\'s 502 at once when the relay cannot follow the execution, as when it says so mid-stream', async () => {
    const emulator = await createEmulator({ rateLimit: false, clock: createManualClock() });
    cleanups.push(() => void emulator.close());
    const { executionId } = await createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, budget: false }).executions.start('c-sample-linear');
    // A relay whose client the service refuses: it can follow nothing, and answers 502 with its own error body.
    const relay = createRunRelay({ client: createClient({ apiKey: 'rf_ffffffffffffffffffffffffffffffff', baseUrl: emulator.url, budget: false }), tokens: createRunTokens({ secret: SECRET }) });
    cleanups.push(() => { relay.close(); });
    const token = await createRunTokens({ secret: SECRET }).sign({ executionId, scope: ['read'], ttlMs: 60_000 });
    const clock = createManualClock();
    let calls = 0;
    const outcome = await firstValueFrom(
      connectRun(`http://relay.local/executions/${executionId}/events`, {
        token,
        scheduler: clockScheduler(clock),
        fetch: (input, init) => {
          calls += 1;
          return relay.fetch(new Request(input, init));
        },
      }).pipe(filter((event) => event.type === 'connection')),
    ).catch((caught: unknown) => caught);
    expect(outcome).toMatchObject({ name: 'RelayError', status: 502, executionId });
    expect(calls).toBe(1);
  });

  it('still reconnects through a proxy\'s 502 that is no relay\'s answer (a relay restarting behind it)', async () => {
    const clock = createManualClock();
    let calls = 0;
    const subscription = connectRun('http://relay.local/executions/we-1/events', {
      token: 't',
      scheduler: clockScheduler(clock),
      fetch: () => {
        calls += 1;
        return Promise.resolve(new Response('<html><body>502 Bad Gateway</body></html>', { status: 502, headers: { 'content-type': 'text/html' } }));
      },
    }).subscribe({ error: () => undefined });
    await driveClock(clock, { until: () => calls === 3 });
    expect(subscription.closed).toBe(false);
    subscription.unsubscribe();
  });

  it('reconnects to a relay answering 503 after the relay\'s retry delay, doubling up to maxReconnectMs (manual clock)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const clock = createManualClock();
    const tokens = createRunTokens({ secret: SECRET });
    const relay = createRunRelay({ client: createClient({ apiKey: 'rf_00000000000000000000000000000000', baseUrl: 'http://127.0.0.1:1/v1', budget: false }), tokens });
    relay.close();
    const start = clock.now();
    const calls: number[] = [];
    const subscription = connectRun('http://relay.local/executions/we-1/events', {
      token: 't',
      maxReconnectMs: 30_000,
      scheduler: clockScheduler(clock),
      fetch: (input, init) => {
        calls.push(clock.now() - start);
        return relay.fetch(new Request(input, init));
      },
    }).subscribe();
    await driveClock(clock, { until: () => calls.length === 7 });
    subscription.unsubscribe();
    // The first wait is the default retry (2 s) drawn in its upper half at 0.5: 1.5 s; then 3, 6, 12, and the 30 s bound's 22.5 s.
    expect(calls).toEqual([0, 1_500, 4_500, 10_500, 22_500, 45_000, 67_500]);
    expect(clock.nextTimerAt()).toBeUndefined();
  });
});

describe('connectRun watching a stream for silence', () => {
  it('sets its silence timer once per three heartbeats, not once per chunk, and still reconnects once the stream stays silent that long', async () => {
    const clock = createManualClock();
    const virtual = clockScheduler(clock);
    let timers = 0;
    // The client's scheduler, counting every timer set on it.
    const scheduler = { now: () => virtual.now(), schedule: ((...args: Parameters<typeof virtual.schedule>) => {
      timers += 1;
      return virtual.schedule(...args);
    }) as typeof virtual.schedule };
    const streams: ReadableStreamDefaultController<Uint8Array>[] = [];
    const events: { type: string; error?: string }[] = [];
    const subscription = connectRun('http://relay.local/executions/we-1/events', {
      token: 't',
      scheduler,
      fetch: () => {
        const body = new ReadableStream<Uint8Array>({ start: (controller) => void streams.push(controller) });
        return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'flowstream-heartbeat': '1000' } }));
      },
    }).subscribe({ next: (event) => events.push({ type: event.type, ...(event.type === 'connection' && event.reconnecting !== undefined ? { error: event.reconnecting.error } : {}) }) });
    await driveClock(clock, { until: () => streams.length === 1 });
    const first = streams[0]!;
    const bytes = new TextEncoder().encode(': heartbeat\n\n');
    const began = clock.now();
    for (let chunk = 0; chunk < 1_000; chunk += 1) {
      first.enqueue(bytes);
      await driveClock(clock, { toTime: clock.now() + 60 });
    }
    // 1,000 chunks over 60 s, never 3 s apart: the stream was kept, and its watch was set again once per
    // 3 s of the limit (about 20 timers), not once per chunk (1,000).
    expect(streams).toHaveLength(1);
    expect(timers).toBeLessThanOrEqual((clock.now() - began) / 3_000 + 2);
    // Silence: three heartbeats missed, the connection is given up and made again.
    await driveClock(clock, { until: () => streams.length === 2 });
    expect(clock.now() - began).toBeLessThanOrEqual(60_000 + 3_000 + 2_000);
    expect(events).toContainEqual({ type: 'connection', error: 'no heartbeat from the relay' });
    subscription.unsubscribe();
  });
});
