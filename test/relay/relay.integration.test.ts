import fc from 'fast-check';
import { filter, firstValueFrom, share, timer } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createManualClock, driveClock } from '../../src/emulator/index.js';
import { createRunHub } from '../../src/runs/run-hub.js';
import { runResult } from '../../src/runs/run-result.js';
import { allEvents, rebuiltMessages, type RelayWorld, relayWorld, withoutConnection } from './harness.js';

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
  /** Status reads of `executionId` so far. */
  const statusReads = (world: RelayWorld, executionId: string): number => world.emulator.requests.list({ endpoint: 'status', executionId }).length;

  it("shares the client's hub by default: viewers and a client.watch of the same execution cost one poll stream", async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const clock = createManualClock();
    const made = await world({}, { clock });
    const { client, token, view } = made;
    const alone = await client.executions.start('c-sample-parallel', { variables: { copy: 'alone' } });
    let ended = 0;
    const count = (): void => {
      ended += 1;
    };
    client.watch(alone.executionId).subscribe({ complete: count });
    await driveClock(clock, { until: () => ended === 1, turns: 20 });
    const { executionId } = await client.executions.start('c-sample-parallel', { variables: { copy: 'shared' } });
    view(executionId, await token(executionId)).subscribe({ complete: count });
    client.watch(executionId).subscribe({ complete: count });
    await driveClock(clock, { until: () => ended === 3, turns: 20 });
    expect(statusReads(made, alone.executionId)).toBeGreaterThan(3);
    expect(Math.abs(statusReads(made, executionId) - statusReads(made, alone.executionId))).toBeLessThanOrEqual(Math.ceil(statusReads(made, alone.executionId) * 0.05));
  });

  it('follows through the hub it is given: a client of that hub watching the execution shares the poll', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const clock = createManualClock();
    const hub = createRunHub();
    const made = await world({ hub }, { clock });
    const { emulator, client, token, view } = made;
    const app = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler, budget: false, hub });
    const alone = await client.executions.start('c-sample-parallel', { variables: { copy: 'alone' } });
    let ended = 0;
    const count = (): void => {
      ended += 1;
    };
    app.watch(alone.executionId).subscribe({ complete: count });
    await driveClock(clock, { until: () => ended === 1, turns: 20 });
    const { executionId } = await client.executions.start('c-sample-parallel', { variables: { copy: 'shared' } });
    view(executionId, await token(executionId)).subscribe({ complete: count });
    app.watch(executionId).subscribe({ complete: count });
    await driveClock(clock, { until: () => ended === 3, turns: 20 });
    expect(statusReads(made, alone.executionId)).toBeGreaterThan(3);
    expect(Math.abs(statusReads(made, executionId) - statusReads(made, alone.executionId))).toBeLessThanOrEqual(Math.ceil(statusReads(made, alone.executionId) * 0.05));
  });
});
