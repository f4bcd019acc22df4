import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Agenda, maxInAnyWindow, Simulation, ticket } from './simulation.js';

const WINDOW = 62_000; // the service's 60 s plus the 2 s latency allowance

/** `runs` runs polling back to back; every answer carries `headers`. */
function polling(sim: Simulation, runs: number, headers: () => Parameters<Simulation['report']>[2], durationMs: number): void {
  const agenda = new Agenda(sim, (sent) => {
    agenda.at(sent.at + 100, () => {
      sim.report(sent.ticket, 200, headers());
      sim.enqueue(ticket('status', sent.ticket.key));
    });
  });
  for (let index = 0; index < runs; index++) agenda.at(sim.now, () => sim.enqueue(ticket('status', `we-${index}`)));
  agenda.runUntil(durationMs);
}

describe('the service\'s own limits', () => {
  it('takes a per-minute limit lower than configured from X-RateLimit-Limit-RPM, and paces to it', () => {
    const sim = new Simulation();
    polling(sim, 20, () => ({ limitPerMinute: 60 }), 5 * 60_000);
    expect(sim.snapshot()).toMatchObject({ limitPerMinute: 60, followingServer: false });
    const after = sim.sent.filter((sent) => sent.at >= WINDOW).map((sent) => sent.at);
    // 60 − 5% = 57 usable per window, one per ⌈62,000 / 53⌉ ms once saturated.
    expect(maxInAnyWindow(after, WINDOW)).toBeLessThanOrEqual(57);
    expect(after.slice(-2)[1]! - after.slice(-2)[0]!).toBe(Math.ceil(WINDOW / 53));
  });

  it('takes a daily limit lower than configured from X-RateLimit-Limit-Daily, its reserve and bucket with it', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-0'));
    sim.report(ticket('status', 'we-0'), 200, { limitPerDay: 2_000 });
    expect(sim.snapshot()).toMatchObject({ limitPerDay: 2_000, remainingToday: 1_999, day: { reserve: 100, burst: 190 } });
  });

  it('never raises a limit above the configured one, and ignores a limit of 0', () => {
    const sim = new Simulation({ requestsPerMinute: 30 });
    sim.enqueue(ticket('status', 'we-0'));
    sim.report(ticket('status', 'we-0'), 200, { limitPerMinute: 500, limitPerDay: 0 });
    expect(sim.snapshot()).toMatchObject({ limitPerMinute: 30, limitPerDay: 10_000 });
  });

  it('once it has a lower limit, no window of the service\'s after that holds more than it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 120_000 }), (limit, runs, learnedAt) => {
        const sim = new Simulation();
        let learned = false;
        polling(sim, runs, () => (learned || sim.now >= learnedAt ? ((learned = true), { limitPerMinute: limit }) : {}), learnedAt + 5 * 60_000);
        const adoptedAt = sim.sent.find((sent) => sent.at >= learnedAt)?.at ?? learnedAt;
        const after = sim.sent.filter((sent) => sent.at >= adoptedAt + WINDOW).map((sent) => sent.at);
        expect(maxInAnyWindow(after, 60_000)).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 40 },
    );
  });
});

describe('an abort and the service\'s count', () => {
  it('goes at once while the service\'s day still has requests, though polls only look, spending at most half of it', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-0'));
    sim.advanceTo(100);
    // 300 left today: below the reserve of 500, so polls have nothing left; aborts may use it.
    sim.report(ticket('status', 'we-0'), 200, { remainingPerDay: 300 });
    const polls = [1, 2, 3].map((index) => sim.enqueue(ticket('status', `we-${index}`)));
    const aborts = [1, 2, 3].map((index) => sim.enqueue(ticket('abort', `we-${index}`)));
    expect(aborts.map((id) => sim.sentAt(id))).toEqual([100, 100, 100]);
    expect(polls.map((id) => sim.sentAt(id))).toEqual([undefined, undefined, undefined]);
    // The 297 left after the aborts are the reserve kept for aborts and starts: looks spend at most half
    // of it until the day has surely reset — one each day ÷ 148 (9.7 minutes), not one a minute.
    sim.advanceTo(3_600_000);
    const looks = polls.map((id) => sim.sentAt(id) ?? Number.NaN);
    const gaps = looks.map((at, index) => at - (looks[index - 1] ?? 0));
    for (const gap of gaps) {
      expect(gap).toBeGreaterThan(9.5 * 60_000);
      expect(gap).toBeLessThan(9.8 * 60_000);
    }
  });
});
