import { filter, firstValueFrom, from, lastValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createManualClock, driveClock, type ManualClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import type { RunRelay, RunRelayOptions } from '../../src/relay/run-relay.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, toRunState } from '../../src/runs/run-state.js';
import { openWorlds, rebuiltMessages, type RelayWorld, withoutConnection } from './harness.js';

const world = openWorlds();

afterEach(() => {
  vi.restoreAllMocks();
});

const CANVAS = 'c-relay-idle';

/** A run of a quarter of an hour: long enough for viewers to leave it and come back while it goes on. */
const LONG_RUN: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'A long run',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-plan', title: 'Plan', parents: ['node-start'], durationMs: 30_000, messages: [{ content: 'Planned.' }] },
    { id: 'node-work', title: 'Work', parents: ['node-plan'], durationMs: 600_000, messages: [{ content: 'Worked a while.' }, { content: 'Worked some more.' }] },
    { id: 'node-report', title: 'Report', parents: ['node-work'], durationMs: 60_000, messages: [{ content: 'Reported.' }], files: [{ name: 'report.md', type: 'text/markdown', content: '# Report' }] },
  ],
};

/** Past the end of LONG_RUN, from its start. */
const AFTER_THE_RUN_MS = 20 * 60_000;

/**
 * A viewer's fetch straight into the relay (no sockets, so a viewer leaving is seen at once, not after
 * the machine's time), whose open streams `drop()` breaks as a lost connection would, and the
 * `Flowstream-Follow` of each answer.
 */
function inProcess(relay: RunRelay): { readonly fetch: typeof fetch; drop(): void; readonly follows: string[] } {
  const open = new Set<() => void>();
  const follows: string[] = [];
  const viaRelay = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const response = await relay.fetch(new Request(input, init));
    const body = response.body;
    if (body === null) return response;
    follows.push(response.headers.get('flowstream-follow') ?? '');
    const reader = body.getReader();
    let breakOff: () => void = () => undefined;
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        breakOff = () => {
          open.delete(breakOff);
          controller.error(new TypeError('network error'));
          reader.cancel().catch(() => undefined);
        };
        open.add(breakOff);
        // Leaving (the viewer's abort) ends the stream as a fetch's does.
        init?.signal?.addEventListener('abort', breakOff, { once: true });
      },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          open.delete(breakOff);
          controller.close();
        } else {
          controller.enqueue(value);
        }
      },
      async cancel(reason) {
        open.delete(breakOff);
        await reader.cancel(reason);
      },
    });
    return new Response(broken, { status: response.status, headers: response.headers });
  };
  return {
    fetch: viaRelay,
    drop() {
      for (const breakOff of [...open]) breakOff();
    },
    follows,
  };
}

/** A world on a manual clock running LONG_RUN, and its reads of an execution counted. */
async function idleWorld(options: Partial<RunRelayOptions>): Promise<RelayWorld & { readonly clock: ManualClock; readonly reads: (executionId: string) => number }> {
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
  const clock = createManualClock();
  const made = await world(options, { clock });
  made.emulator.workflows.add(LONG_RUN);
  const reads = (executionId: string): number => made.emulator.requests.list({ endpoint: 'status', executionId }).length + made.emulator.requests.list({ endpoint: 'output', executionId }).length;
  return { ...made, clock, reads };
}

/**
 * Moves the clock on until `until` holds. A viewer's token is checked on machine time (WebCrypto): while
 * that goes on no timer may be pending, and the clock waits for it (readiness only, bounded).
 */
async function drive(clock: ManualClock, until: () => boolean): Promise<void> {
  for (;;) {
    try {
      await driveClock(clock, { until });
      return;
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('driveClock: nothing left')) throw error;
      await vi.waitFor(
        () => {
          if (!until() && clock.nextTimerAt() === undefined) throw new Error('nothing to happen yet');
        },
        { timeout: 10_000, interval: 5 },
      );
    }
  }
}

/** The state `events` fold to, without the time it took. */
async function finalState(events: readonly RunEvent[]): Promise<RunState> {
  const state = await lastValueFrom(from(events).pipe(toRunState()));
  return { ...state, elapsedMs: 0 };
}

const working = (event: RunEvent): boolean => event.type === 'node' && event.nodeId === 'node-work' && event.status === 'executing';

describe('the run relay: an execution no viewer watches', () => {
  it('stops reading it keepIdleMs after its last viewer left; the execution runs on to its end, never aborted', async () => {
    const { client, clock, emulator, relay, token, view, reads } = await idleWorld({ keepIdleMs: 30_000 });
    const { executionId } = await client.executions.start(CANVAS);
    const viewer = inProcess(relay);
    const events: RunEvent[] = [];
    const subscription = view(executionId, await token(executionId), { fetch: viewer.fetch }).subscribe((event) => events.push(event));
    await drive(clock, () => events.some(working));
    subscription.unsubscribe();
    const leftAt = clock.now();
    await driveClock(clock, { toTime: leftAt + 29_000 });
    // Still followed within keepIdleMs: a viewer back now would resume where it was.
    expect(client.hub.followers(executionId)).toBe(1);
    await driveClock(clock, { toTime: leftAt + 31_000 });
    expect(client.hub.followers(executionId)).toBe(0);
    const readsWhenLetGo = reads(executionId);
    await driveClock(clock, { toTime: leftAt + AFTER_THE_RUN_MS });
    expect(emulator.executions.get(executionId)?.status).toBe('finish');
    // One read may have been on its way when the relay let go.
    expect(reads(executionId)).toBeLessThanOrEqual(readsWhenLetGo + 1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });

  it('with keepIdleMs: 0 stops reading it as soon as the last viewer leaves', async () => {
    const { client, clock, emulator, relay, token, view, reads } = await idleWorld({ keepIdleMs: 0 });
    const { executionId } = await client.executions.start(CANVAS);
    const viewer = inProcess(relay);
    const events: RunEvent[] = [];
    const subscription = view(executionId, await token(executionId), { fetch: viewer.fetch }).subscribe((event) => events.push(event));
    await drive(clock, () => events.some(working));
    subscription.unsubscribe();
    await driveClock(clock, { toTime: clock.now() + 1_000 });
    expect(client.hub.followers(executionId)).toBe(0);
    const readsWhenLeft = reads(executionId);
    await driveClock(clock, { toTime: clock.now() + AFTER_THE_RUN_MS });
    expect(emulator.executions.get(executionId)?.status).toBe('finish');
    // One read may have been on its way when the viewer left.
    expect(reads(executionId)).toBeLessThanOrEqual(readsWhenLeft + 1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });

  it('follows it again for a viewer that comes back later: a snapshot, then the live events, ending in the state of a viewer that stayed', async () => {
    // The viewer comes back 90 s after its connection broke (`retry:` 120 s, drawn in its upper half), the relay lets go after 5 s.
    const { client, clock, relay, token, view, reads } = await idleWorld({ keepIdleMs: 5_000, retryMs: 120_000 });
    const { executionId } = await client.executions.start(CANVAS);
    const readToken = await token(executionId);
    const viewer = inProcess(relay);
    const events: RunEvent[] = [];
    let done = false;
    view(executionId, readToken, { fetch: viewer.fetch, maxReconnectMs: 120_000 }).subscribe({ next: (event) => events.push(event), complete: () => (done = true) });
    await drive(clock, () => events.some(working));
    const droppedAt = clock.now();
    const seenBeforeDrop = events.length;
    viewer.drop();
    await driveClock(clock, { toTime: droppedAt + 6_000 });
    const readsWhileAway = reads(executionId);
    await driveClock(clock, { toTime: droppedAt + 85_000 });
    expect(reads(executionId)).toBeLessThanOrEqual(readsWhileAway + 1);
    await drive(clock, () => done);
    expect(viewer.follows).toHaveLength(2);
    expect(viewer.follows[1]).not.toBe(viewer.follows[0]);
    const back = withoutConnection(events.slice(seenBeforeDrop));
    expect(back[0]?.type).toBe('snapshot');
    expect(back.filter((event) => event.type === 'finished')).toHaveLength(1);
    // A viewer from after the end (the relay keeps the finished execution) is given how it ended.
    const late: RunEvent[] = [];
    let lateDone = false;
    view(executionId, readToken).subscribe({ next: (event) => late.push(event), complete: () => (lateDone = true) });
    await drive(clock, () => lateDone);
    expect(await finalState(events)).toEqual(await finalState(late));
    expect(rebuiltMessages(events)).toEqual(rebuiltMessages(late));
    expect(events.at(-1)).toEqual(late.at(-1));
  });

  it('resumes the same follow for a viewer back within keepIdleMs: no snapshot, nothing read again', async () => {
    const { client, clock, relay, token, view, reads } = await idleWorld({});
    const [dropping, staying] = await Promise.all([client.executions.start(CANVAS, { variables: { copy: 'dropping' } }), client.executions.start(CANVAS, { variables: { copy: 'staying' } })]);
    const viewer = inProcess(relay);
    const events: RunEvent[] = [];
    let ended = 0;
    const count = (): void => {
      ended += 1;
    };
    view(dropping.executionId, await token(dropping.executionId), { fetch: viewer.fetch }).subscribe({ next: (event) => events.push(event), complete: count });
    view(staying.executionId, await token(staying.executionId), { fetch: inProcess(relay).fetch }).subscribe({ complete: count });
    await drive(clock, () => events.some(working));
    viewer.drop();
    await drive(clock, () => ended === 2);
    expect(viewer.follows).toHaveLength(2);
    expect(viewer.follows[1]).toBe(viewer.follows[0]);
    expect(withoutConnection(events).filter((event) => event.type === 'snapshot')).toHaveLength(0);
    // The same follow (its numbering, the hub's, is kept only while the hub's poll goes on), and as many
    // reads as an execution whose viewer stayed (within 5%: the two polls' answers race on loopback).
    const stayed = reads(staying.executionId);
    expect(Math.abs(reads(dropping.executionId) - stayed)).toBeLessThanOrEqual(Math.ceil(stayed * 0.05));
  });

  it("leaves the app's own client.watch of the execution polling when it lets go", async () => {
    const { client, clock, relay, token, view, reads } = await idleWorld({ keepIdleMs: 5_000 });
    const { executionId } = await client.executions.start(CANVAS);
    const events: RunEvent[] = [];
    const subscription: Subscription = view(executionId, await token(executionId), { fetch: inProcess(relay).fetch }).subscribe((event) => events.push(event));
    const watched = firstValueFrom(client.watch(executionId).pipe(filter((event) => event.type === 'finished')));
    await drive(clock, () => events.some(working));
    expect(client.hub.followers(executionId)).toBe(2);
    subscription.unsubscribe();
    const leftAt = clock.now();
    await driveClock(clock, { toTime: leftAt + 6_000 });
    expect(client.hub.followers(executionId)).toBe(1);
    const readsWhenLetGo = reads(executionId);
    let finished: RunEvent | undefined;
    void watched.then((event) => (finished = event));
    await drive(clock, () => finished !== undefined);
    expect(finished).toMatchObject({ type: 'finished', result: { status: 'finish', endedBy: 'finish' } });
    expect(reads(executionId)).toBeGreaterThan(readsWhenLetGo);
  });

  it("brings a viewer back after it let go, while the app's watch kept the hub's poll, to the state in the hub's numbering, ending as a viewer that stayed", async () => {
    // Away for 450 s (`retry:` 600 s, drawn in its upper half): the work's messages come meanwhile.
    const { client, clock, relay, token, view } = await idleWorld({ keepIdleMs: 5_000, retryMs: 600_000 });
    const { executionId } = await client.executions.start(CANVAS);
    const readToken = await token(executionId);
    const viewer = inProcess(relay);
    const events: RunEvent[] = [];
    let done = false;
    view(executionId, readToken, { fetch: viewer.fetch, maxReconnectMs: 600_000 }).subscribe({ next: (event) => events.push(event), complete: () => (done = true) });
    const watching = client.watch(executionId).subscribe();
    await drive(clock, () => events.some(working));
    const seenBeforeDrop = events.length;
    viewer.drop();
    await driveClock(clock, { toTime: clock.now() + 6_000 });
    expect(client.hub.followers(executionId)).toBe(1);
    await drive(clock, () => done);
    watching.unsubscribe();
    // The hub followed the execution all along: the same numbering, and the events the viewer missed stand in one snapshot.
    expect(viewer.follows).toHaveLength(2);
    expect(viewer.follows[1]).toBe(viewer.follows[0]);
    const back = withoutConnection(events.slice(seenBeforeDrop));
    expect(back[0]?.type).toBe('snapshot');
    expect(back.filter((event) => event.type === 'finished')).toHaveLength(1);
    const late: RunEvent[] = [];
    let lateDone = false;
    view(executionId, readToken).subscribe({ next: (event) => late.push(event), complete: () => (lateDone = true) });
    await drive(clock, () => lateDone);
    expect(await finalState(events)).toEqual(await finalState(late));
    expect(rebuiltMessages(events)).toEqual(rebuiltMessages(late));
  });

  it('cancels an execution it let go: followed afresh, aborted once, answered its result', async () => {
    const { client, clock, emulator, relay, token, view, base } = await idleWorld({ keepIdleMs: 5_000 });
    const { executionId } = await client.executions.start(CANVAS);
    const cancelToken = await token(executionId, ['read', 'cancel']);
    const events: RunEvent[] = [];
    const subscription = view(executionId, cancelToken, { fetch: inProcess(relay).fetch }).subscribe((event) => events.push(event));
    await drive(clock, () => events.some(working));
    subscription.unsubscribe();
    await driveClock(clock, { toTime: clock.now() + 6_000 });
    expect(client.hub.followers(executionId)).toBe(0);
    let answer: Response | undefined;
    void relay.fetch(new Request(`${base}/executions/${executionId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${cancelToken}` } })).then((response) => (answer = response));
    await drive(clock, () => answer !== undefined);
    expect(answer?.status).toBe(200);
    expect(await answer?.json()).toMatchObject({ executionId, status: 'failed', endedBy: 'aborted' });
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(1);
  });
});
