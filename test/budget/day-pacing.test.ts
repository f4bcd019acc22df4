import { describe, expect, it } from 'vitest';
import { dayBucketAfterSend, dayBucketAt, dayBucketEmptyAt, dayBucketReadyAt, FULL_DAY_BUCKET, sustainablePerMinute } from '../../src/budget/day-pacing.js';
import { budgetLimits } from '../../src/budget/limits.js';
import type { RequestBudgetOptions } from '../../src/budget/limits.js';
import { Agenda, maxInAnyWindow, Simulation, ticket } from './simulation.js';

const DAY = 86_402_000; // the service's day plus the 2 s latency allowance

/** `runs` runs polling back to back (answer after 100 ms, asked again at once), for `durationMs`. */
function sustained(options: RequestBudgetOptions, runs: number, durationMs: number): Simulation {
  const sim = new Simulation(options);
  const agenda = new Agenda(sim, (sent) => {
    agenda.at(sent.at + 100, () => {
      sim.report(sent.ticket);
      sim.enqueue(ticket('status', sent.ticket.key));
    });
  });
  for (let index = 0; index < runs; index++) agenda.at(0, () => sim.enqueue(ticket('status', `we-${index}`)));
  agenda.runUntil(durationMs);
  return sim;
}

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((time, index) => time - times[index]!);
}

describe('the day bucket', () => {
  const limits = budgetLimits();

  it('holds a tenth of the usable day and refills so that no day window holds more than the usable day', () => {
    expect(limits).toMatchObject({ usablePerDay: 9_500, dayBurst: 950 });
    expect(limits.dayRefillMs).toBeCloseTo(DAY / (9_500 - 950 + 1), 6);
    expect(sustainablePerMinute(limits)).toBeCloseTo(5.94, 2);
    expect(budgetLimits({ dayBurst: 0.5 })).toMatchObject({ dayBurst: 4_750 });
  });

  it('lets its capacity go at once, refills one token per refill time, and says when the next one is whole', () => {
    let bucket = FULL_DAY_BUCKET;
    for (let sent = 0; sent < limits.dayBurst; sent++) {
      expect(dayBucketReadyAt(bucket, 0, limits)).toBe(Number.NEGATIVE_INFINITY);
      bucket = dayBucketAfterSend(bucket, 0, limits);
    }
    expect(dayBucketReadyAt(bucket, 0, limits)).toBeCloseTo(limits.dayRefillMs, 6);
    expect(dayBucketAt(bucket, limits.dayRefillMs / 2, limits).tokens).toBeCloseTo(0.5, 9);
    // Refilled for a long time, it holds no more than its capacity.
    expect(dayBucketAt(bucket, 1e12, limits).tokens).toBe(limits.dayBurst);
  });

  it('lends to starts and aborts, which do not wait for it: the polls after them pay it back', () => {
    const small = budgetLimits({ requestsPerDay: 200 });
    let bucket = FULL_DAY_BUCKET;
    for (let sent = 0; sent < small.dayBurst + 3; sent++) bucket = dayBucketAfterSend(bucket, 0, small);
    expect(dayBucketAt(bucket, 0, small).tokens).toBe(-3);
    expect(dayBucketReadyAt(bucket, 0, small)).toBeCloseTo(4 * small.dayRefillMs, 6);
  });

  it('projects when the bucket runs dry at the last hour\'s pace, and not when the refill keeps up', () => {
    const perHour = 3_600_000 / limits.dayRefillMs;
    expect(dayBucketEmptyAt({ now: 0, tokens: 600, sentLastHour: perHour + 300 }, limits)).toBeCloseTo(2 * 3_600_000, 3);
    expect(dayBucketEmptyAt({ now: 0, tokens: 600, sentLastHour: perHour }, limits)).toBeUndefined();
  });
});

describe('pacing the day', () => {
  it('lets sporadic use burst: a busy ten minutes on an untouched day go at the minute\'s pace', () => {
    const paced = sustained({}, 20, 10 * 60_000);
    const unlimited = sustained({ requestsPerDay: 1_000_000_000 }, 20, 10 * 60_000);
    expect(paced.sent.length).toBeGreaterThan(850);
    expect(paced.sent.map((sent) => sent.at)).toEqual(unlimited.sent.map((sent) => sent.at));
  });

  it('slows sustained use evenly to what the day can sustain: never blind, never into the reserve', () => {
    const options = { requestsPerDay: 2_000 };
    const limits = budgetLimits(options);
    const sim = sustained(options, 20, 4 * DAY);
    const times = sim.sent.map((sent) => sent.at);
    // Polls never reach the reserve, in any day window.
    expect(maxInAnyWindow(times, DAY)).toBeLessThanOrEqual(limits.usablePerDay);
    // From the second day on: the bucket's refill, evenly, every day.
    const refillPerDay = DAY / limits.dayRefillMs;
    for (const day of [1, 2, 3]) {
      const sent = times.filter((at) => at >= day * DAY && at < (day + 1) * DAY).length;
      expect(Math.abs(sent - refillPerDay)).toBeLessThanOrEqual(2);
    }
    // Never blind: once the burst is spent, a poll goes every refill time, never a longer gap.
    expect(Math.max(...gaps(times.filter((at) => at >= 3_600_000)))).toBeLessThanOrEqual(Math.ceil(limits.dayRefillMs) + 1);
  });

  it('shows the day in its state: used, remaining, the reserve, the burst left, the pace it sustains and when the burst would run out', () => {
    const sim = sustained({}, 20, 8 * 60_000);
    const limits = budgetLimits();
    const { day } = sim.snapshot();
    expect(day.used).toBe(sim.sent.length);
    expect(day.remaining).toBe(10_000 - sim.sent.length);
    expect(day.reserve).toBe(500);
    expect(day.burst).toBe(Math.floor(950 - sim.sent.length + sim.now / limits.dayRefillMs));
    expect(day.sustainablePerMinute).toBeCloseTo(sustainablePerMinute(limits), 9);
    // A busy spell: at that pace the burst runs out within the hour.
    expect(day.exhaustedAt).toBeGreaterThan(sim.now);
    expect(day.exhaustedAt).toBeLessThan(sim.now + 3_600_000);
    // Quiet again, the projection goes.
    expect(sim.snapshot(sim.now + 2 * 3_600_000).day.exhaustedAt).toBeUndefined();
  });
});
