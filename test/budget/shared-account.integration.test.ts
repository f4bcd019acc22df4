import { afterEach, describe, expect, it } from 'vitest';
import { createAccountBudget } from '../../src/budget/index.js';
import type { BudgetState } from '../../src/budget/index.js';
import { createClient, type Client } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import type { RunResult } from '../../src/domain/model.js';

const CANVAS = 'c-slow';
/** A start and one task of three minutes that writes a message each minute. */
const SLOW: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'Three slow minutes',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 180_000, messages: [{ content: 'one', atMs: 60_000 }, { content: 'two', atMs: 120_000 }, { content: 'three' }] },
  ],
};

const open: Emulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/**
 * Runs `count` runs on each client at once, on the emulator's manual clock, until all have ended. Run n
 * of every client has the same variables: identical starts (service.md §2.2) from two clients.
 */
async function runAll(clock: ManualClock, clients: readonly [Client, number][]): Promise<RunResult[][]> {
  let pending = clients.reduce((sum, [, count]) => sum + count, 0);
  const results = clients.map(([client, count]) =>
    Promise.all(
      Array.from({ length: count }, (_, n) =>
        new Promise<RunResult>((resolve, reject) => {
          client.run(CANVAS, { variables: { n } }).subscribe({
            next: (event) => {
              if (event.type === 'finished') resolve(event.result);
            },
            error: reject,
            complete: () => (pending -= 1),
          });
        }),
      ),
    ),
  );
  await driveClock(clock, { until: () => pending === 0 });
  return Promise.all(results);
}

/** Each run's status polls as the budget let them through, rebuilt from its published states. */
function meanPollIntervals(states: readonly BudgetState[], executionIds: readonly string[]): number[] {
  const polls = new Map<string, number[]>();
  for (const state of states) {
    for (const [executionId, cadence] of Object.entries(state.cadences)) {
      const times = polls.get(executionId) ?? [];
      if (times.at(-1) !== cadence.lastSentAt) times.push(cadence.lastSentAt);
      polls.set(executionId, times);
    }
  }
  return executionIds.map((id) => {
    const times = polls.get(id) ?? [];
    return ((times.at(-1) ?? 0) - (times[0] ?? 0)) / (times.length - 1);
  });
}

describe('one account budget for two clients, on the emulator with its real limits', () => {
  it('is never refused, counts both clients in one window, and polls their runs evenly', { timeout: 60_000 }, async () => {
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [SLOW] });
    open.push(emulator);
    const budget = createAccountBudget({ scheduler: emulator.scheduler });
    const connection = { apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget };
    const reports = createClient(connection);
    const imports = createClient(connection);
    const states: BudgetState[] = [];
    const subscription = budget.state$.subscribe((state) => states.push(state));

    const [many, few] = await runAll(clock, [[reports, 20], [imports, 5]]);
    subscription.unsubscribe();

    expect([...many!, ...few!].every((result) => result.status === 'finish')).toBe(true);
    const requests = emulator.requests.list();
    expect(emulator.requests.list({ status: 429 })).toEqual([]);
    // The clients started identical runs (same variables): the account spaced them, none drew a 409.
    expect(emulator.requests.list({ status: 409 })).toEqual([]);
    // The limit was in play: about four of the service's minutes at about 90 requests each.
    const minutes = ((requests.at(-1)?.emulatorTime ?? 0) - (requests[0]?.emulatorTime ?? 0)) / 60_000;
    expect(requests.length / minutes).toBeGreaterThan(80);
    // One count for the account: every request either client sent, and nothing else.
    expect(budget.snapshot().usedToday).toBe(requests.length);
    // Fair across the clients: a run of the client with 5 is polled as often as one of the client with 20.
    const intervals = meanPollIntervals(states, [...many!, ...few!].map((result) => result.executionId));
    const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    const ratio = mean(intervals.slice(20)) / mean(intervals.slice(0, 20));
    expect(ratio).toBeGreaterThan(1 / 1.3);
    expect(ratio).toBeLessThan(1.3);
    await budget.close();
  });
});
