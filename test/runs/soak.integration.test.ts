import type { Subscription } from 'rxjs';
import { afterEach, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { collectGarbage } from '../support/collect-garbage.js';

const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** A seeded generator, so a failing soak can be replayed. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

/** The process's active resources (timers, sockets, servers, …) counted by kind. */
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The kinds of which more are active now than in `baseline`, with how many more. */
function grownSince(baseline: ReadonlyMap<string, number>): Record<string, number> {
  const grown: Record<string, number> = {};
  for (const [kind, count] of resources()) if (count > (baseline.get(kind) ?? 0)) grown[kind] = count - (baseline.get(kind) ?? 0);
  return grown;
}

it(
  'leaves no timers, sockets or run objects behind after 1,000 runs over loopback unsubscribed at random moments, and aborts exactly the unfinished ones',
  { timeout: 120_000 },
  async () => {
    // Real HTTP on 127.0.0.1, so that a request left open would hold a socket; the client as users make
    // it, with its request budget (opened wide, the day as the minute, so the soak stays short, yet
    // requests queue in it).
    const emulator = await createEmulator({ speed: 100, rateLimit: false });
    open.push(emulator);
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, polling: { minMs: 5, maxMs: 20 }, budget: { requestsPerMinute: 1_000_000, requestsPerDay: 1_000_000_000, burst: 20 } });
    const random = mulberry32(4);
    const baseline = resources();
    // Every run's subscriber: anything left holding one (a timer, a listener, a queued request) keeps it alive.
    const subscribers: WeakRef<Subscription>[] = [];
    let finishedSeen = 0;
    let failures = 0;

    for (let batch = 0; batch < 10; batch += 1) {
      await Promise.all(
        Array.from({ length: 100 }, (_, index) => {
          // 0: leave during the start; otherwise after that many events, or never for the longest.
          const leaveAfter = Math.floor(random() * 30);
          return new Promise<void>((resolve) => {
            let seen = 0;
            let subscription: Subscription | undefined = undefined;
            const leave = (): void => {
              subscription?.unsubscribe();
              resolve();
            };
            // Distinct variables: identical starts within 1 s would be refused as duplicates (service.md §2.2).
            subscription = client.run('c-sample-linear', { variables: { run: `${batch}-${index}` } }).subscribe({
              next: (event) => {
                seen += 1;
                if (event.type === 'finished') finishedSeen += 1;
                if (seen === leaveAfter) leave();
              },
              error: () => {
                failures += 1;
                resolve();
              },
              complete: () => {
                resolve();
              },
            });
            subscribers.push(new WeakRef(subscription));
            if (leaveAfter === 0) leave();
          });
        }),
      );
    }

    // Every execution whose run left before `finished` is aborted, once; a start withdrawn from the
    // budget before it was sent made no execution at all. Leaving on or after `finished` aborts nothing.
    const executions = (): number => emulator.executions.list().length;
    await vi.waitFor(
      () => {
        expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(executions() - finishedSeen);
      },
      { timeout: 20_000, interval: 20 },
    );
    const aborted = emulator.requests.list({ endpoint: 'abort' }).map((request) => request.executionId);
    expect(new Set(aborted).size).toBe(aborted.length);
    // service.md §3.5: an abort stops what still ran; one that came after the execution ended changed nothing.
    // One that came after the last node ended but before the service's tick turned the execution `finish`
    // (service.md §3.3) finds no node to stop, and still fails the execution.
    const cut = aborted.map((executionId) => emulator.executions.get(executionId!)).filter((execution) => execution?.abortedAt !== undefined);
    expect(cut.length).toBeGreaterThan(0);
    for (const execution of cut) {
      const stopped = execution?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user') ?? false;
      const betweenLastEndAndTick = execution?.nodes.every((node) => node.status === 'finish') ?? false;
      expect(stopped || betweenLastEndAndTick).toBe(true);
    }
    expect(cut.filter((execution) => execution?.nodes.some((node) => node.errorMessage === 'Workflow aborted by user')).length).toBeGreaterThan(0);
    expect(emulator.executions.list().filter((execution) => execution.status === 'executing')).toEqual([]);
    expect(failures).toBe(0);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(executions());
    // Starts left while still queued in the budget were withdrawn: sent never, so fewer than 1,000.
    expect(executions()).toBeLessThan(1000);
    expect(executions()).toBeGreaterThan(800);
    expect(aborted.length).toBeGreaterThan(100);
    expect(finishedSeen).toBeGreaterThan(100);
    // The emulator logs an abort when it arrives; the budget counts it answered when its answer is back.
    await vi.waitFor(
      () => {
        expect(client.budget?.snapshot()).toMatchObject({ queued: { total: 0 }, inFlight: 0 });
      },
      { timeout: 5_000, interval: 20 },
    );

    // Counted outside `vi.waitFor`, whose own timers would count too; the last aborts' answers may still
    // be on their way back, so the loop turns (without timers) a bounded number of times first.
    for (let turn = 0; turn < 1_000 && timers() > (baseline.get('Timeout') ?? 0); turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(timers()).toBeLessThanOrEqual(baseline.get('Timeout') ?? 0);
    // Sockets: a request left open would keep its connection busy for ever. Idle keep-alive connections
    // of fetch's pool close by themselves within seconds (the server's 5 s keep-alive timeout).
    await vi.waitFor(
      () => {
        expect(process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length).toBeLessThanOrEqual(baseline.get('TCPSocketWrap') ?? 0);
      },
      { timeout: 15_000, interval: 100 },
    );
    for (let turn = 0; turn < 1_000 && Object.keys(grownSince(baseline)).length > 0; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(grownSince(baseline)).toEqual({});

    // Memory returns to its baseline: no subscriber of the 1,000 runs is still reachable.
    await vi.waitFor(
      async () => {
        await collectGarbage();
        expect(subscribers.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
      },
      { timeout: 10_000, interval: 100 },
    );
  },
);
