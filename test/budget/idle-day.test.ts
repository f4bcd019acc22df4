import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetLimits, DAY_SLOTS, dayBucketAt, FULL_DAY_BUCKET } from '../../src/budget/account-rules.js';
import type { RequestBudgetOptions } from '../../src/budget/account-rules.js';
import { Agenda, maxInAnyWindow, mostUpToEach, Simulation, ticket } from './simulation.js';

const DAY = 86_402_000; // the service's day plus the 2 s latency allowance
const HOUR = 3_600_000;
const SLOT = DAY / DAY_SLOTS;

/**
 * `runs` runs polling back to back (answered after 100 ms) until `spanMs`, when the polls still
 * waiting are cancelled: from the last answer on, nothing is sent or answered. It ends on a step, so
 * that the idle spell begins where the budget last looked.
 */
function pollThenStop(options: RequestBudgetOptions, runs: number, spanMs: number): Simulation {
  const sim = new Simulation(options);
  const waiting = new Map<string, number>();
  const poll = (key: string): void => {
    waiting.set(key, sim.enqueue(ticket('status', key)));
  };
  const agenda = new Agenda(sim, (sent) => {
    const key = sent.ticket.key ?? '';
    waiting.delete(key);
    agenda.at(sent.at + 100, () => {
      sim.report(sent.ticket);
      if (sim.now < spanMs) poll(key);
    });
  });
  for (let index = 0; index < runs; index++) {
    agenda.at(0, () => {
      poll(`we-${index}`);
    });
  }
  agenda.at(spanMs, () => {
    for (const id of waiting.values()) sim.cancel(id);
    waiting.clear();
  });
  agenda.runUntil(spanMs + 1_000);
  sim.wake();
  return sim;
}

/** The bucket at `at` as the budget holds it, before any step at `at`. */
function bucketBeforeStep(sim: Simulation, at: number) {
  return dayBucketAt((sim.account.record.dayBucket ?? FULL_DAY_BUCKET), at, sim.account.limits);
}

describe('the day bucket after an idle spell', () => {
  // A bucket of nine tenths of the day: a busy morning spends it at the minute's pace, and the rest of
  // the day trickles at what is left, until the morning leaves the window.
  const options = { dayBurst: 0.9 };
  const limits = budgetLimits(options);
  const emptyDayPerMinute = (limits.usablePerDay / DAY) * 60_000; // ≈ 6.6

  it('is full again a day after a busy day, refilling at the pace of an empty day', () => {
    const sim = pollThenStop(options, 20, 23 * HOUR);
    const busy = sim.sent.length;
    expect(busy).toBeGreaterThan(9_000);
    expect(sim.snapshot().day.sustainablePerMinute).toBeLessThan(0.5);
    sim.advanceBy(24 * HOUR);
    sim.wake();
    const { day } = sim.snapshot();
    expect(sim.sent).toHaveLength(busy);
    expect(day.burst).toBe(limits.dayBurst);
    expect(day.sustainablePerMinute).toBeCloseTo(emptyDayPerMinute, 2);
  });

  it('refills at the quicker pace from when the morning left the window, early in a 12-hour spell, not at the stale one', () => {
    const sim = pollThenStop(options, 20, 23 * HOUR);
    const stalePerMs = (sim.account.record.dayBucket ?? FULL_DAY_BUCKET).perMs;
    sim.advanceBy(12 * HOUR);
    const stale = bucketBeforeStep(sim, sim.now).tokens;
    sim.wake();
    const { tokens } = dayBucketAt((sim.account.record.dayBucket ?? FULL_DAY_BUCKET), sim.now, limits);
    expect(tokens).toBeLessThanOrEqual(limits.dayBurst);
    // Once the morning (the bucket's first nine tenths) has left, the window holds no more than what
    // trickled after it, so the day sustains at least the rest; a budget woken once a slot saw that
    // within a slot of it.
    const morningLeftAt = sim.sent[limits.dayBurst - 1]!.at + DAY;
    expect(morningLeftAt).toBeLessThan(sim.now - 6 * HOUR);
    const perMsOnceLeft = (limits.usablePerDay - (sim.sent.length - limits.dayBurst)) / DAY;
    expect(tokens - stale).toBeGreaterThanOrEqual((perMsOnceLeft - stalePerMs) * (sim.now - morningLeftAt - SLOT));
  });

  it('after any idle spell holds what a budget woken once a slot through it would: no less than the stale pace gave, no more than its capacity, never the reserve', () => {
    fc.assert(
      fc.property(
        fc.record({ requestsPerDay: fc.integer({ min: 40, max: 3_000 }), dayReserve: fc.constantFrom(0.05, 0.1, 0.3), dayBurst: fc.constantFrom(0.05, 0.1, 0.5, 0.9) }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: DAY }),
        fc.integer({ min: 0, max: 2 * DAY }),
        (options, runs, spanMs, idleMs) => {
          const limits = budgetLimits(options);
          const sim = pollThenStop(options, runs, spanMs);
          const woken = pollThenStop(options, runs, spanMs);
          const before = (sim.account.record.dayBucket ?? FULL_DAY_BUCKET);
          const end = sim.now + idleMs;
          const stale = bucketBeforeStep(sim, end);
          sim.advanceTo(end);
          sim.wake();
          for (let slot = 1; before.at + slot * SLOT < end; slot++) {
            // Both budgets stepped at the spell's start: what came before it, they saw alike.
            if (before.at + slot * SLOT <= woken.now) continue;
            woken.advanceTo(before.at + slot * SLOT);
            woken.wake();
          }
          woken.advanceTo(end);
          woken.wake();
          const after = dayBucketAt((sim.account.record.dayBucket ?? FULL_DAY_BUCKET), end, limits);
          const wokenAfter = dayBucketAt((woken.account.record.dayBucket ?? FULL_DAY_BUCKET), end, limits);
          expect(after.tokens).toBeCloseTo(wokenAfter.tokens, 6);
          // Stopping once the bucket is full, it takes the pace at the end, never a slower one.
          expect(after.perMs).toBeGreaterThanOrEqual(wokenAfter.perMs - 1e-15);
          expect(after.tokens).toBeGreaterThanOrEqual(stale.tokens - 1e-9);
          expect(after.tokens).toBeLessThanOrEqual(limits.dayBurst);
          // With nothing sent the day's pace only rises: the one it has now bounds every one of the spell.
          expect(after.tokens).toBeLessThanOrEqual(Math.min(limits.dayBurst, before.tokens + after.perMs * (end - before.at)) + 1e-9);
          // What it saved goes at once, but never into the reserve.
          for (let index = 0; index < limits.dayBurst + 10; index++) sim.enqueue(ticket('interactive'));
          sim.advanceBy(HOUR);
          expect(mostUpToEach(sim.sent, (sent) => sent.ticket.priority === 'interactive' || sent.ticket.priority === 'status', DAY)).toBeLessThanOrEqual(limits.usablePerDay);
          expect(maxInAnyWindow(sim.sent.map((sent) => sent.at), DAY)).toBeLessThanOrEqual(limits.perDay);
        },
      ),
      { numRuns: 40 },
    );
  });
});
