import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Subscription } from 'rxjs';
import { afterEach, expect, it, vi } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { createHttpClient } from '../../src/http/client.js';
import { createRuns } from '../../src/runs/create-runs.js';

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

/** A full garbage collection, without a flag on the test runner: V8 hands out `gc` to a new context. */
function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Let pending microtasks and finalizers run between passes, so that what they hold is released too.
  return new Promise<void>((resolve) => {
    gc();
    setImmediate(() => {
      gc();
      resolve();
    });
  });
}

it('leaves no timers or run objects behind after 1,000 runs unsubscribed at random moments, and aborts exactly the unfinished ones', { timeout: 60_000 }, async () => {
  const emulator = await createEmulator({ speed: 100, rateLimit: false, listen: false });
  open.push(emulator);
  const http = createHttpClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });
  const runs = createRuns(http.executions, { polling: { minMs: 5, maxMs: 20 } });
  const random = mulberry32(4);
  const baseline = timers();
  // Every run's subscriber: anything left holding one (a timer, a listener, a queued request) keeps it alive.
  const subscribers: WeakRef<Subscription>[] = [];
  let leftEarly = 0;
  let failures = 0;

  for (let batch = 0; batch < 10; batch += 1) {
    await Promise.all(
      Array.from({ length: 100 }, (_, index) => {
        // 0: leave during the start; otherwise after that many events, or never for the longest.
        const leaveAfter = Math.floor(random() * 30);
        return new Promise<void>((resolve) => {
          let seen = 0;
          let finished = false;
          let subscription: Subscription | undefined = undefined;
          const leave = (): void => {
            // Leaving on `finished` aborts nothing; leaving before it aborts once.
            if (!finished) leftEarly += 1;
            subscription?.unsubscribe();
            resolve();
          };
          // Distinct variables: identical starts within 1 s would be refused as duplicates (PROTOCOL §2.2).
          subscription = runs.run('c-sample-linear', { variables: { run: `${batch}-${index}` } }).subscribe({
            next: (event) => {
              seen += 1;
              finished ||= event.type === 'finished';
              if (seen === leaveAfter) leave();
            },
            error: () => {
              failures += 1;
              resolve();
            },
            complete: () => { resolve(); },
          });
          subscribers.push(new WeakRef(subscription));
          if (leaveAfter === 0) leave();
        });
      }),
    );
  }

  await vi.waitFor(
    () => {
      expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(leftEarly);
    },
    { timeout: 20_000, interval: 20 },
  );
  // Counted outside `vi.waitFor`, whose own timers would count too; the last aborts' answers may still
  // be on their way back, so the loop turns (without timers) a bounded number of times first.
  for (let turn = 0; turn < 1_000 && timers() > baseline; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(timers()).toBeLessThanOrEqual(baseline);
  expect(failures).toBe(0);
  expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1000);
  expect(leftEarly).toBeGreaterThan(100);
  expect(leftEarly).toBeLessThan(1000);

  // Memory returns to its baseline: no subscriber of the 1,000 runs is still reachable.
  await vi.waitFor(
    async () => {
      await collectGarbage();
      expect(subscribers.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    },
    { timeout: 10_000, interval: 100 },
  );
});
