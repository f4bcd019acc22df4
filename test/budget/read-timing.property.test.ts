import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAccountBudget } from '../../src/budget/account-budget.js';
import type { RequestBudgetOptions } from '../../src/budget/account-rules.js';
import { MAX_DEFER_ROUNDS, type ReadNeed } from '../../src/budget/budget-core.js';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';
import { Agenda, maxInAnyWindow, serviceRejections, Simulation, ticket } from './simulation.js';

/** One read per this at most, as the budget paces the service's 100 a minute (at most 95 in any 62 s). */
const SLOT_MS = 682;
const LATENCY_MS = 100;

/** What a run asks of each read: its bounds, and perhaps how likely a change is or that one is certain. */
interface RunShape {
  readonly minMs: number;
  readonly wishMs: number;
  readonly maxMs: number;
  /** The change becomes likely this long after the read is due; absent: a flat model. */
  readonly likelyInMs?: number;
  /** Every how many reads one is certain to find a change (0: never). */
  readonly certainEvery: number;
}

const shapeArb = (options: { readonly model: boolean; readonly certain: boolean }): fc.Arbitrary<RunShape> =>
  fc
    .record({
      minMs: fc.integer({ min: 0, max: 2_000 }),
      extraMs: fc.integer({ min: 0, max: 8_000 }),
      wishShare: fc.double({ min: 0, max: 1, noNaN: true }),
      likelyInMs: options.model ? fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: undefined }) : fc.constant(undefined),
      certainEvery: options.certain ? fc.integer({ min: 0, max: 4 }) : fc.constant(0),
    })
    .map(({ minMs, extraMs, wishShare, likelyInMs, certainEvery }) => ({
      minMs,
      wishMs: Math.round(minMs + wishShare * extraMs),
      maxMs: minMs + extraMs,
      ...(likelyInMs === undefined ? {} : { likelyInMs }),
      certainEvery,
    }));

interface Trace {
  readonly sim: Simulation;
  /** Per run: each read's need and when it went. */
  readonly reads: Map<string, { readonly need: ReadNeed; readonly sentAt: number }[]>;
}

/**
 * Runs reading the way the run layer does behind a budget: each registers its next read's need as
 * its read answers and asks at once; the budget holds the read and grants it.
 */
function readMany(shapes: readonly RunShape[], durationMs: number, options: RequestBudgetOptions = {}): Trace {
  const sim = new Simulation(options);
  const reads = new Map<string, { readonly need: ReadNeed; readonly sentAt: number }[]>();
  const asked = new Map<number, ReadNeed>();
  const ask = (key: string, shape: RunShape, since: number, count: number): void => {
    const certain = shape.certainEvery > 0 && count % shape.certainEvery === 0;
    const need: ReadNeed = {
      since,
      minMs: shape.minMs,
      wishMs: shape.wishMs,
      maxMs: shape.maxMs,
      ...(shape.likelyInMs === undefined ? {} : { likelyAt: since + shape.wishMs + shape.likelyInMs }),
      ...(certain ? { certain } : {}),
    };
    sim.core.need(key, need);
    asked.set(sim.enqueue(ticket('status', key)), need);
  };
  const agenda = new Agenda(sim, (sent) => {
    const key = sent.ticket.key!;
    const done = reads.get(key) ?? [];
    done.push({ need: asked.get(sent.id)!, sentAt: sent.at });
    reads.set(key, done);
    agenda.at(sent.at + LATENCY_MS, () => {
      sim.report(sent.ticket);
      ask(key, shapes[Number(key.slice(3))]!, sim.now, done.length);
    });
  });
  shapes.forEach((shape, index) => {
    agenda.at(0, () => {
      ask(`we-${String(index)}`, shape, 0, 0);
    });
  });
  agenda.runUntil(durationMs);
  return { sim, reads };
}

describe('the budget times every run\'s read (virtual time)', () => {
  it('never sends past the account\'s limits, whatever the runs ask', () => {
    fc.assert(
      fc.property(fc.array(shapeArb({ model: true, certain: true }), { minLength: 1, maxLength: 60 }), (shapes) => {
        const { sim } = readMany(shapes, 3 * 60_000);
        const times = sim.sent.map((sent) => sent.at);
        expect(maxInAnyWindow(times, 60_000)).toBeLessThanOrEqual(100);
        expect(serviceRejections(times, 100)).toBe(0);
      }),
      { numRuns: 25 },
    );
  });

  it('never sends a read before its run\'s minimum, and while the account can give it, never after its maximum gap', () => {
    fc.assert(
      fc.property(fc.array(shapeArb({ model: true, certain: true }), { minLength: 1, maxLength: 4 }), (given) => {
        // The account can give it: no run reads faster than the account's pace shared by all of them.
        const shapes = given.map((shape) => {
          const floorMs = given.length * 700;
          return { ...shape, minMs: Math.max(floorMs, shape.minMs), wishMs: Math.max(floorMs, shape.wishMs), maxMs: Math.max(floorMs, shape.maxMs) };
        });
        const { reads } = readMany(shapes, 3 * 60_000);
        for (const done of reads.values()) {
          for (const { need, sentAt } of done.slice(1)) {
            expect(sentAt).toBeGreaterThanOrEqual(need.since + need.minMs);
            expect(sentAt).toBeLessThanOrEqual(need.since + Math.max(need.minMs, need.maxMs));
          }
        }
      }),
      { numRuns: 40 },
    );
  });

  it('never waits past a run\'s maximum gap for a wish beyond it, while the account can give it', () => {
    fc.assert(
      fc.property(fc.array(shapeArb({ model: false, certain: false }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 20_000 }), (given, beyondMs) => {
        const shapes = given.map((shape) => {
          const floorMs = given.length * 700;
          const maxMs = Math.max(floorMs, shape.maxMs);
          return { ...shape, minMs: Math.max(floorMs, shape.minMs), wishMs: maxMs + beyondMs, maxMs };
        });
        const { reads } = readMany(shapes, 3 * 60_000);
        for (const done of reads.values()) {
          for (const { need, sentAt } of done.slice(1)) expect(sentAt).toBeLessThanOrEqual(need.since + Math.max(need.minMs, need.maxMs));
        }
      }),
      { numRuns: 40 },
    );
  });

  it('never starves a run on a tight account: each read goes within a bounded number of turns of all the runs', () => {
    fc.assert(
      fc.property(fc.array(shapeArb({ model: true, certain: true }), { minLength: 5, maxLength: 60 }), (shapes) => {
        const { reads } = readMany(shapes, 4 * 60_000);
        // Due at its maximum gap at the latest; then deferred by at most MAX_DEFER_ROUNDS turns, behind
        // the turn it joined and the reads that cut in (at most two per run and turn).
        const turnMs = shapes.length * SLOT_MS;
        const boundMs = (MAX_DEFER_ROUNDS + 2) * 3 * turnMs;
        expect(reads.size).toBe(shapes.length);
        for (const done of reads.values()) {
          for (const { need, sentAt } of done.slice(1)) expect(sentAt - (need.since + need.maxMs)).toBeLessThanOrEqual(boundMs);
        }
      }),
      { numRuns: 20 },
    );
  });

  it('shares a tight account evenly by run with a flat model: no run reads more than one read more than another', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 60 }), fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 60, maxLength: 60 }), (runs, wishes) => {
        const shapes = wishes.slice(0, runs).map((wishMs): RunShape => ({ minMs: 0, wishMs, maxMs: 10_000, certainEvery: 0 }));
        // Tight from the first read: no burst, in which each run would read at its own wish.
        const { reads } = readMany(shapes, 5 * 60_000, { burst: 1 });
        const counts = [...reads.values()].map((done) => done.length);
        expect(counts).toHaveLength(runs);
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 20 },
    );
  });

  it('ranks by value: when one read can go, the run whose change is likelier goes first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 1, max: 500 }), fc.boolean(), (likelyPastMs, laterMs, likelierAsksFirst) => {
        // The account's slot is taken: the next read may go one slot later, and only one.
        const sim = new Simulation({ burst: 1 });
        sim.enqueue(ticket('status', 'we-other'));
        const likelier: ReadNeed = { since: 0, minMs: 0, wishMs: 0, maxMs: 10_000, likelyAt: -likelyPastMs };
        const lessLikely: ReadNeed = { since: 0, minMs: 0, wishMs: 0, maxMs: 10_000, likelyAt: laterMs };
        const order = likelierAsksFirst ? (['we-a', 'we-b'] as const) : (['we-b', 'we-a'] as const);
        for (const key of order) {
          sim.core.need(key, key === 'we-a' ? likelier : lessLikely);
          sim.enqueue(ticket('status', key));
        }
        sim.advanceBy(2 * SLOT_MS);
        expect(sim.sent.map((sent) => sent.ticket.key)).toEqual(['we-other', 'we-a', 'we-b'].slice(0, sim.sent.length));
        expect(sim.sent.length).toBeGreaterThanOrEqual(2);
      }),
    );
  });

  it('holds a read until its need is due, then lets it go at once on a loose account; a read without a need goes when it asks', () => {
    const sim = new Simulation();
    sim.core.need('we-1', { since: 0, minMs: 500, wishMs: 1_500, maxMs: 10_000 });
    sim.enqueue(ticket('status', 'we-1'));
    sim.enqueue(ticket('status', 'we-2'));
    expect(sim.sent.map((sent) => [sent.ticket.key, sent.at])).toEqual([['we-2', 0]]);
    sim.advanceTo(10_000);
    // Wished at 1.5 s, and one run alone has more than that from the account: its wish stands.
    expect(sim.sent.map((sent) => [sent.ticket.key, sent.at])).toEqual([['we-2', 0], ['we-1', 1_500]]);
  });
});

describe('a run that leaves while its read is held', () => {
  it('leaves nothing behind: the read is dropped, its need withdrawn, no timer left', async () => {
    const clock = createManualClock();
    const budget = createAccountBudget({ scheduler: clockScheduler(clock) });
    const withdraw = budget.needRead!('we-1', { since: clock.now(), minMs: 500, wishMs: 5_000, maxMs: 10_000 });
    const controller = new AbortController();
    const held = budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-1' }, controller.signal);
    // Held until due (a loose budget: its share, 2 s, before its wish of 5 s): the budget's one timer is set for it.
    expect(clock.nextTimerAt()).toBe(clock.now() + 2_000);
    controller.abort(new Error('left'));
    await expect(held).rejects.toThrow('left');
    expect(clock.nextTimerAt()).toBeUndefined();
    expect(budget.snapshot().queued.total).toBe(0);
    // A need registered and withdrawn before its read asked: the next read of the key goes when it asks.
    budget.needRead!('we-2', { since: clock.now(), minMs: 500, wishMs: 5_000, maxMs: 10_000 })();
    withdraw();
    await budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-2' });
    expect(clock.nextTimerAt()).toBeUndefined();
    await budget.close();
  });
});
