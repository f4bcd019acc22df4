import fc from 'fast-check';
import { filter, firstValueFrom, share, timer } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator } from '../../src/emulator/index.js';
import { createRunRelay } from '../../src/relay/run-relay.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';
import { createRunHub, type RunHub } from '../../src/runs/run-hub.js';
import { createManualClock, driveClock } from '../../src/emulator/index.js';
import { runResult } from '../../src/runs/events.js';
import { allEvents, rebuiltMessages, type RelayWorld, relayWorld, SECRET, withoutConnection } from './harness.js';

const open: RelayWorld[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((world) => world.close()));
});

async function world(...args: Parameters<typeof relayWorld>): Promise<RelayWorld> {
  const made = await relayWorld(...args);
  open.push(made);
  return made;
}

describe('the run relay: one follow of an execution, shared by every viewer', () => {
  it('gives two viewers and a late third the same events, ending with the result client.watch gives', async () => {
    const { client, emulator, token, view } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const first = allEvents(view(executionId, readToken));
    const second = allEvents(view(executionId, readToken));
    await firstValueFrom(view(executionId, readToken).pipe(filter((event) => event.type === 'message')));
    const late = allEvents(view(executionId, readToken));
    const reference = runResult(client.watch(executionId));
    const [a, b, c] = await Promise.all([first, second, late]);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(a.at(-1)).toEqual({ type: 'finished', executionId, result: await reference });
    expect(rebuiltMessages(a)).toEqual(Object.fromEntries((await reference).output.flatMap((node) => node.messages.map((message) => [message.messageId, message.content]))));
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });
});

describe('the run relay: what the service sees', () => {
  it('polls an execution with three viewers as often as a single watch polls another (within 5%)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const clock = createManualClock();
    const { client, emulator, token, view } = await world({}, { clock });
    const [relayed, watched] = await Promise.all([client.executions.start('c-sample-parallel', { variables: { copy: 'relayed' } }), client.executions.start('c-sample-parallel', { variables: { copy: 'watched' } })]);
    const readToken = await token(relayed.executionId);
    let ended = 0;
    const count = (): void => {
      ended += 1;
    };
    for (let viewer = 0; viewer < 3; viewer++) view(relayed.executionId, readToken).subscribe({ complete: count });
    client.watch(watched.executionId).subscribe({ complete: count });
    await driveClock(clock, { until: () => ended === 4, turns: 20 });
    const statusReads = (executionId: string): number => emulator.requests.list({ endpoint: 'status', executionId }).length;
    expect(statusReads(watched.executionId)).toBeGreaterThan(3);
    expect(Math.abs(statusReads(relayed.executionId) - statusReads(watched.executionId))).toBeLessThanOrEqual(Math.ceil(statusReads(watched.executionId) * 0.05));
  });

  it('never aborts when viewers leave: the execution finishes and a later viewer still gets its end', async () => {
    const { client, emulator, token, view } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    await firstValueFrom(view(executionId, readToken).pipe(filter((event) => event.type === 'node' && event.status === 'executing')));
    const later = await allEvents(view(executionId, readToken));
    expect(later.at(-1)).toMatchObject({ type: 'finished', result: { status: 'finish', endedBy: 'finish' } });
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });
});

describe('the run relay: viewers through dropped connections', () => {
  it('every viewer reconnects and gets every event once, however the server drops all connections mid-run (property)', async () => {
    await fc.assert(
      // Drops from 0 to 10 s of emulator time after both viewers got their first event: the run goes on for 14 s more.
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 3 }), async (dropsAt) => {
        const { client, server, emulator, token, view } = await world({ heartbeatMs: 1_000 });
        const { executionId } = await client.executions.start('c-sample-linear');
        const readToken = await token(executionId);
        const firstEvents: Promise<unknown>[] = [];
        const viewers = [0, 1].map(() => {
          const events$ = view(executionId, readToken).pipe(share());
          firstEvents.push(firstValueFrom(events$));
          return allEvents(events$);
        });
        await Promise.all(firstEvents);
        const drops = dropsAt.map((at) =>
          timer(at, emulator.scheduler).subscribe(() => {
            server.closeAllConnections();
          }),
        );
        const seen = await Promise.all(viewers);
        for (const drop of drops) drop.unsubscribe();
        const log = await allEvents(view(executionId, readToken));
        const result = log.at(-1)?.type === 'finished' ? log.at(-1) : undefined;
        expect(result).toBeDefined();
        for (const events of seen) {
          expect(events.some((event) => event.type === 'connection' && event.reconnecting !== undefined)).toBe(true);
          expect(withoutConnection(events)).toEqual(log);
          expect(rebuiltMessages(events)).toEqual(rebuiltMessages(log));
        }
        expect(Object.keys(rebuiltMessages(log))).toHaveLength(4);
      }),
      { numRuns: 3, endOnFailure: true },
    );
  });
});

describe('the run relay: one poll stream with the watches and runs of its hub', () => {
  it('gives a viewer of an execution the app already watches a snapshot it reads as a run state, then every later event to the end', async () => {
    const { client, token, eventsUrl, view } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const watched = runResult(client.watch(executionId));
    // The app's watch has read the execution: the relay's follow joins the hub's stream late.
    await firstValueFrom(client.watch(executionId).pipe(filter((event) => event.type === 'node')));
    const readToken = await token(executionId);
    const raw = await fetch(eventsUrl(executionId), { headers: { authorization: `Bearer ${readToken}` } });
    const frames = (await raw.text()).split('\n\n');
    const snapshot = frames.find((frame) => frame.startsWith('event: snapshot\n'));
    expect(JSON.parse(snapshot?.split('\ndata: ')[1] ?? 'null')).toMatchObject({ executionId, nodes: expect.any(Array) as unknown, files: expect.any(Array) as unknown });
    const events = await allEvents(view(executionId, readToken));
    expect(events[0]?.type).toBe('snapshot');
    expect(events.at(-1)).toEqual({ type: 'finished', executionId, result: await watched });
  });

  /**
   * All in-process on a manual clock (counts that do not depend on the machine's speed): status reads
   * of an execution watched alone by the app's client, then of one a relay follows for a viewer and,
   * once it does, the app's client watches too (until that watch ends).
   */
  async function readsAloneAndShared(hub: { readonly relay?: RunHub; readonly app?: RunHub }): Promise<{ alone: number; shared: number }> {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false, rateLimit: false });
    const clientOf = (given?: RunHub): Client =>
      createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, ...(given === undefined ? {} : { hub: given }) });
    // The relay's client has a hub of its own; given one, the relay follows through that instead.
    const client = clientOf();
    const app = hub.app === undefined ? client : clientOf(hub.app);
    const tokens = createRunTokens({ secret: SECRET, scheduler: emulator.scheduler });
    const relay = createRunRelay({ client, tokens, scheduler: emulator.scheduler, ...(hub.relay === undefined ? {} : { hub: hub.relay }) });
    try {
      const statusReads = (executionId: string): number => emulator.requests.list({ endpoint: 'status', executionId }).length;
      let ended = 0;
      const count = (): void => {
        ended += 1;
      };
      const alone = await client.executions.start('c-sample-parallel', { variables: { copy: 'alone' } });
      app.watch(alone.executionId).subscribe({ complete: count });
      await driveClock(clock, { until: () => ended === 1 });
      const { executionId } = await client.executions.start('c-sample-parallel', { variables: { copy: 'shared' } });
      const token = await tokens.sign({ executionId, scope: ['read'], ttlMs: 3_600_000 });
      let response: Response | undefined;
      void relay.fetch(new Request(`http://127.0.0.1/executions/${executionId}/events`, { headers: { authorization: `Bearer ${token}` } })).then((answered) => (response = answered));
      // Readiness only: the token's check (WebCrypto) takes machine time, not emulator time; then the relay follows the execution.
      await vi.waitFor(() => {
        expect((hub.relay ?? client.hub).followers(executionId)).toBeGreaterThan(0);
      }, { timeout: 10_000 });
      await driveClock(clock, { until: () => response !== undefined });
      expect(response?.status).toBe(200);
      app.watch(executionId).subscribe({ complete: count });
      await driveClock(clock, { until: () => ended === 2 });
      await response?.body?.cancel();
      return { alone: statusReads(alone.executionId), shared: statusReads(executionId) };
    } finally {
      relay.close();
      await emulator.close();
    }
  }

  it("shares the client's hub by default: a viewer and a client.watch of the same execution cost one poll stream", async () => {
    const { alone, shared } = await readsAloneAndShared({});
    expect(alone).toBeGreaterThan(3);
    expect(Math.abs(shared - alone)).toBeLessThanOrEqual(Math.ceil(alone * 0.05));
  });

  it('follows through the hub it is given: a client of that hub watching the execution shares the poll', async () => {
    const hub = createRunHub();
    const { alone, shared } = await readsAloneAndShared({ relay: hub, app: hub });
    expect(alone).toBeGreaterThan(3);
    expect(Math.abs(shared - alone)).toBeLessThanOrEqual(Math.ceil(alone * 0.05));
  });
});
