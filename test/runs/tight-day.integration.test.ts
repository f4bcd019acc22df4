import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Subscription } from 'rxjs';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import { mulberry32 } from '../../src/emulator/engine/seeded-random.js';

const open: Emulator[] = [];
const subscriptions: Subscription[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

const MINUTE = 60_000;

/** Two chained 2-minute tasks, their durations drawn per execution: an always-on service's workflow. */
const STEADY: WorkflowDefinition = {
  canvasId: 'c-steady',
  title: 'Steady',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-gather', parents: ['node-start'], durationMs: 2 * MINUTE, durationCv: 0.1, messages: [{ content: 'gathered' }] },
    { id: 'node-write', parents: ['node-gather'], durationMs: 2 * MINUTE, durationCv: 0.1, messages: [{ content: 'written' }] },
  ],
};

/** A run a minute for this long, on an account that gives about six and a half reads a minute, as the day's pace does. */
const ARRIVALS = 60;
const PER_MINUTE = 7;

/**
 * Runs arriving one a minute on a budget as tight as the day's pace (service.md §2.1: 10,000 a day is
 * about 7 a minute), `output: 'stream'` (a run's default), no model; per run, from the execution
 * settling to its `finished` event, emulator ms.
 */
async function endLatencies(): Promise<number[]> {
  // The client's jitter, seeded: the same reads every time.
  vi.spyOn(Math, 'random').mockImplementation(mulberry32(11));
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [STEADY] });
  open.push(emulator);
  const client = createClient({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    fetch: emulator.fetch,
    scheduler: emulator.scheduler,
    durations: false,
    // A burst of one: the pacer spreads the minute's 7 evenly. With the default burst of 5 it sends only
    // 3 a window (62 s) when saturated, 2.9 a minute, less than a run a minute needs (its start, a status
    // and an output read): that account could not keep up, its backlog grew without end, and where it
    // stood at the 60th run hung on the phase of the arrivals (p50 102 s to 493 s for a run every 55 to 65 s).
    budget: { requestsPerMinute: PER_MINUTE, burst: 1 },
  });
  const seenAt = new Map<string, number>();
  for (let item = 0; item < ARRIVALS; item += 1) {
    emulator.scheduler.schedule(() => {
      subscriptions.push(
        client.run('c-steady', { variables: { item } }).subscribe((event) => {
          if (event.type === 'finished') seenAt.set(event.executionId, clock.now());
        }),
      );
    }, item * MINUTE);
  }
  await driveClock(clock, { until: () => seenAt.size === ARRIVALS, toTime: clock.now() + (ARRIVALS + 30) * MINUTE });
  return emulator.executions.list().map((execution) => (seenAt.get(execution.executionId) ?? Number.POSITIVE_INFINITY) - (execution.settledAt ?? Number.NaN));
}

describe('a steady stream of runs on a tight account (virtual time)', () => {
  // Measured: p50 33 s, the longest 75 s; 45 s and 79 s while a run's end always read the output again.
  it('sees every run\'s end within 2 minutes of the execution settling, half of them within 1', { timeout: 30_000 }, async () => {
    const latencies = (await endLatencies()).toSorted((a, b) => a - b);
    expect(latencies).toHaveLength(ARRIVALS);
    expect(latencies[ARRIVALS / 2]).toBeLessThan(MINUTE);
    expect(latencies.at(-1)).toBeLessThan(2 * MINUTE);
  });
});
