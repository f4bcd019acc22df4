import { describe, expect, it } from 'vitest';
import { FAIR_FLOOR_MS, readDueAt, type ReadNeed } from '../../src/budget/budget-core.js';
import { Simulation, ticket } from './simulation.js';

/** A quiet run's need: its cadence has backed off to the bounds' maximum. */
const quiet = (since: number): ReadNeed => ({ since, minMs: 500, wishMs: 10_000, maxMs: 10_000 });

/** `runs` runs that have polled once, each answered: the runs reading now. */
function polling(runs: number, options = {}): Simulation {
  const sim = new Simulation(options);
  for (let index = 0; index < runs; index += 1) {
    const read = ticket('status', `we-${String(index)}`);
    sim.enqueue(read);
    sim.advanceBy(1_000);
    sim.report(read);
  }
  return sim;
}

/** When the budget lets the quiet run `we-0`'s next read go, after its need, from now. */
function nextReadAfter(sim: Simulation, need: (since: number) => ReadNeed): number {
  const since = sim.now;
  sim.core.need('we-0', need(since));
  const id = sim.enqueue(ticket('status', 'we-0'));
  sim.advanceBy(600_000);
  return sim.sentAt(id)! - since;
}

describe('when the budget is loose, runs poll faster (the budget times a quiet run\'s read by its share)', () => {
  it('reads a quiet run at its share of the account: one run every 2 s (never faster), ten every 10 runs ÷ the account\'s pace for reads', () => {
    expect(nextReadAfter(polling(1), quiet)).toBe(FAIR_FLOOR_MS);
    const ten = polling(10);
    const shareMs = (10 * 60_000) / ten.account.readsPerMinute(ten.now);
    expect(shareMs).toBeLessThan(10_000);
    expect(nextReadAfter(ten, quiet)).toBeCloseTo(shareMs, 6);
  });

  it('keeps the run\'s own wish when its share is longer (a tight budget stretches every run evenly) or its model times the read', () => {
    expect(nextReadAfter(polling(50), quiet)).toBe(10_000);
    expect(nextReadAfter(polling(1), (since) => ({ ...quiet(since), likelyAt: since + 30_000 }))).toBe(10_000);
    // A run without a budget times its read by the same rule: its wish.
    expect(readDueAt(quiet(0), undefined)).toBe(10_000);
  });

  it('offers the runs less once the day\'s bucket is spent than while it is full', () => {
    const options = { requestsPerMinute: 1_000, requestsPerDay: 1_000, dayBurst: 0.06, burst: 100 };
    const patient = (since: number): ReadNeed => ({ since, minMs: 500, wishMs: 600_000, maxMs: 600_000 });
    const fresh = nextReadAfter(polling(3, options), patient);
    const spent = polling(3, options);
    for (let index = 0; index < 50; index += 1) {
      const read = ticket('status', `we-${String(index % 3)}`);
      spent.enqueue(read);
      spent.report(read);
    }
    const later = nextReadAfter(spent, patient);
    expect(fresh).toBeLessThan(later);
    expect(later).toBeLessThan(600_000);
  });
});
