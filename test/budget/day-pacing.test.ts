import { describe, expect, it } from 'vitest';
import { budgetLimits, dayBucketAfterSend, dayBucketAt, dayBucketEmptyAt, dayBucketReadyAt, dayBucketRefilledAt, FULL_DAY_BUCKET, sustainableRate } from '../../src/budget/account-rules.js';
import type { RequestBudgetOptions } from '../../src/budget/account-rules.js';
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
  const perMinute = (rate: number): number => rate * 60_000;

  it('finds what the day sustains: the usable day per window when nothing will leave it, more when much will soon', () => {
    expect(perMinute(sustainableRate({ remaining: 9_500, leftBy: () => 0, now: 0, windowMs: DAY }))).toBeCloseTo((9_500 / DAY) * 60_000, 9);
    // A morning's batch of 8,000 leaves the window in 20 hours: what it left is spread until then.
    const batchLeavesAt = 20 * 3_600_000;
    const afterBatch = sustainableRate({ remaining: 1_500, leftBy: (at) => (at >= batchLeavesAt ? 8_000 : 0), now: 0, windowMs: DAY });
    expect(perMinute(afterBatch)).toBeGreaterThan(1_500 / (21 * 60));
    expect(perMinute(afterBatch)).toBeLessThanOrEqual(1_500 / (20 * 60));
    // Sends of the last day leaving evenly: the window's own pace goes on.
    const even = sustainableRate({ remaining: 100, leftBy: (at) => Math.floor((at / DAY) * 9_400), now: 0, windowMs: DAY });
    expect(perMinute(even)).toBeGreaterThan(6);
    expect(sustainableRate({ remaining: 0, leftBy: () => 5_000, now: 0, windowMs: DAY })).toBe(0);
  });

  it('holds a tenth of the usable day, lets it go at once and refills at the rate set, up to its capacity', () => {
    expect(limits).toMatchObject({ usablePerDay: 9_500, dayBurst: 950 });
    expect(budgetLimits({ dayBurst: 0.5 })).toMatchObject({ dayBurst: 4_750 });
    let bucket = FULL_DAY_BUCKET;
    for (let sent = 0; sent < limits.dayBurst; sent++) {
      expect(dayBucketReadyAt(bucket, 0, limits)).toBe(Number.NEGATIVE_INFINITY);
      bucket = dayBucketAfterSend(bucket, 0, limits);
    }
    // With no refill set it defers to the day's count and the service's cap.
    expect(dayBucketReadyAt(bucket, 0, limits)).toBe(Number.NEGATIVE_INFINITY);
    bucket = dayBucketRefilledAt(bucket, 0, 1 / 10_000, limits);
    expect(dayBucketReadyAt(bucket, 0, limits)).toBeCloseTo(10_000, 6);
    expect(dayBucketAt(bucket, 5_000, limits).tokens).toBeCloseTo(0.5, 9);
    expect(dayBucketAt(bucket, 1e12, limits).tokens).toBe(limits.dayBurst);
  });

  it('gives starts and aborts, which do not wait for it, what it has saved and never more', () => {
    let bucket = dayBucketRefilledAt(FULL_DAY_BUCKET, 0, 1 / 1_000, limits);
    for (let sent = 0; sent < limits.dayBurst + 3; sent++) bucket = dayBucketAfterSend(bucket, 0, limits);
    expect(dayBucketAt(bucket, 0, limits).tokens).toBe(0);
    expect(dayBucketReadyAt(bucket, 0, limits)).toBeCloseTo(1_000, 6);
  });

  it('projects when the bucket runs dry at the last hour\'s pace, and not when the refill keeps up', () => {
    const bucket = dayBucketRefilledAt({ tokens: 600, at: 0, perMs: 0 }, 0, 100 / 3_600_000, limits);
    expect(dayBucketEmptyAt(bucket, 0, 400, limits)).toBeCloseTo(2 * 3_600_000, 3);
    expect(dayBucketEmptyAt(bucket, 0, 100, limits)).toBeUndefined();
  });
});

/**
 * 20 runs polling back to back, each answer 100 ms after its send, against a service whose count of the
 * day starts at `left` (set to `then.left` at `then.at`: another process spent it), until `until`: when
 * each request went, and what the service has left at the end (below zero: 429s).
 */
function pollingAgainstService(left: number, until: number, then?: { readonly at: number; readonly left: number }): { readonly times: number[]; readonly serviceLeft: number } {
  const sim = new Simulation();
  let serviceLeft = left;
  const agenda = new Agenda(sim, (sent) => {
    serviceLeft -= 1;
    const remaining = serviceLeft;
    agenda.at(sent.at + 100, () => {
      sim.report(sent.ticket, remaining >= 0 ? 200 : 429, { remainingPerDay: Math.max(0, remaining) });
      sim.enqueue(ticket('status', sent.ticket.key));
    });
  });
  for (let index = 0; index < 20; index++) agenda.at(0, () => sim.enqueue(ticket('status', `we-${index}`)));
  if (then !== undefined) {
    agenda.at(then.at, () => {
      serviceLeft = then.left;
    });
  }
  agenda.runUntil(until);
  return { times: sim.sent.map((sent) => sent.at), serviceLeft };
}

describe('pacing the day', () => {
  it('lets sporadic use burst: a busy ten minutes on an untouched day go at the minute\'s pace', () => {
    const paced = sustained({}, 20, 10 * 60_000);
    const unlimited = sustained({ requestsPerDay: 1_000_000_000 }, 20, 10 * 60_000);
    expect(paced.sent.length).toBeGreaterThan(850);
    expect(paced.sent.map((sent) => sent.at)).toEqual(unlimited.sent.map((sent) => sent.at));
  });

  it('slows sustained use evenly to what the day can sustain: never blind, never into the reserve', () => {
    const options = { requestsPerDay: 2_000 };
    const { usablePerDay } = budgetLimits(options);
    const sim = sustained(options, 20, 4 * DAY);
    const times = sim.sent.map((sent) => sent.at);
    // Polls never reach the reserve, in any day window.
    expect(maxInAnyWindow(times, DAY)).toBeLessThanOrEqual(usablePerDay);
    // After the first day, nearly all of the usable day (the 15-minute slots err low), every day, evenly.
    const quarters = Array.from({ length: 12 }, (_, quarter) => times.filter((at) => at >= DAY + (quarter * DAY) / 4 && at < DAY + ((quarter + 1) * DAY) / 4).length);
    for (const quarter of quarters) expect(quarter / (usablePerDay / 4)).toBeGreaterThan(0.97);
    expect(Math.max(...quarters) - Math.min(...quarters)).toBeLessThanOrEqual(3);
    // Never blind: once the burst is spent, no gap is longer than twice the mean one.
    const later = gaps(times.filter((at) => at >= 3_600_000));
    const mean = later.reduce((sum, gap) => sum + gap, 0) / later.length;
    expect(Math.max(...later)).toBeLessThan(2 * mean);
  });

  it('shows the day in its state: used, remaining, the reserve, the burst left, the pace it sustains and when the burst would run out', () => {
    const sim = sustained({}, 20, 8 * 60_000);
    const sent = sim.sent.length;
    const { day } = sim.snapshot();
    expect(day).toMatchObject({ used: sent, remaining: 10_000 - sent, reserve: 500 });
    // Nothing will leave the window for a day: what is left, spread over the day window.
    expect(day.sustainablePerMinute).toBeCloseTo(((9_500 - sent) / DAY) * 60_000, 6);
    // The burst: 950, less what went, plus what the refill gave back meanwhile.
    expect(Math.abs(day.burst - (950 - sent + (8 * 9_500 * 60_000) / DAY))).toBeLessThan(5);
    // A busy spell: at that pace the burst runs out within the hour.
    expect(day.exhaustedAt).toBeGreaterThan(sim.now);
    expect(day.exhaustedAt).toBeLessThan(sim.now + 3_600_000);
    // Quiet again, the projection goes.
    expect(sim.snapshot(sim.now + 2 * 3_600_000).day.exhaustedAt).toBeUndefined();
  });

  it('spreads what a busy morning left until the morning leaves the window, rather than stalling or spending it at once', () => {
    // A bucket of nine tenths of the day: the morning spends it at the minute's pace.
    const sim = sustained({ dayBurst: 0.9 }, 50, DAY - 3_600_000);
    const morning = sim.sent.filter((sent) => sent.at < 3 * 3_600_000).length;
    expect(morning).toBeGreaterThan(8_550);
    const left = 9_500 - morning;
    // Until the morning's sends leave the window, the polls go on at about what is left over that time.
    const later = sim.sent.filter((sent) => sent.at >= 3 * 3_600_000).map((sent) => sent.at);
    expect(later.length).toBeGreaterThan(0.9 * left);
    expect(later.length).toBeLessThanOrEqual(left);
    expect(Math.max(...gaps(later))).toBeLessThan(3 * ((DAY - 4 * 3_600_000) / left));
  });

  it('spreads what the service says is left of the day (a ledger lost mid-day, another process) rather than spending it at once and going blind', () => {
    // The first answer says 1,000 are left today: 9,000 were spent before this budget knew (a Redis that
    // lost the account's record, another process). 500 of them are the reserve, 500 the polls'.
    const { times, serviceLeft } = pollingAgainstService(1_000, 23 * 3_600_000);
    // Never into the reserve, never blind: a tenth of it at once at most, the rest over the day.
    expect(serviceLeft).toBeGreaterThanOrEqual(500);
    expect(times.filter((at) => at < 3_600_000).length).toBeLessThan(100);
    for (let hour = 1; hour < 23; hour++) expect(times.filter((at) => at >= hour * 3_600_000 && at < (hour + 1) * 3_600_000).length).toBeGreaterThan(5);
  });

  it('still polls when the service says only a few are left above the reserve, and looks again without spending the reserve', () => {
    // 505 left: 500 are the reserve, 5 the polls'. A tenth of 5 is half a poll: the bucket must still
    // be able to save a whole one, or no poll would go until the service's day resets. Then nothing is
    // left for polls: looks each minute would spend the reserve in eight hours.
    const { times, serviceLeft } = pollingAgainstService(505, 23 * 3_600_000);
    // The 5 are spread (not blind until the service's day resets), and the looks that follow them, to see
    // whether the day has reset, take no more than half the reserve kept for aborts and starts.
    expect(serviceLeft).toBeGreaterThanOrEqual(250);
    for (let hour = 1; hour < 23; hour++) expect(times.filter((at) => at >= hour * 3_600_000 && at < (hour + 1) * 3_600_000).length).toBeGreaterThan(0);
  });

  it('is not blind for the rest of the day when the service says fewer are left for polls than the bucket\'s share of one, on an account busy the day before', () => {
    // A day at the full pace, then another process spends the next day: 505 left, 5 for polls. Yesterday's
    // sends leaving the window repace the day all the time: a bucket capped at its share of 5 (half a
    // poll) at each would never save the whole token a poll waits for.
    const DAY_MS = 86_400_000;
    const { times, serviceLeft } = pollingAgainstService(10_000, DAY_MS + 23 * 3_600_000, { at: DAY_MS, left: 505 });
    expect(times.filter((at) => at >= DAY_MS + 60_000).length).toBeGreaterThanOrEqual(2);
    expect(serviceLeft).toBeGreaterThanOrEqual(500);
  });
});
