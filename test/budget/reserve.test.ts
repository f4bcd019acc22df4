import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetLimits } from '../../src/budget/account-rules.js';
import type { RequestBudgetOptions } from '../../src/budget/account-rules.js';
import { Agenda, maxInAnyWindow, mostUpToEach, Simulation, ticket } from './simulation.js';
import type { Sent } from './simulation.js';

const DAY = 86_402_000; // the service's day plus the 2 s latency allowance
const MINUTE = 62_000;

interface Traffic {
  /** Runs polling back to back (each answered after 100 ms). */
  readonly runs: number;
  /** An interactive call every this many ms, if any. */
  readonly interactiveEveryMs: number | undefined;
  /** How long the polling goes on before the starts and aborts arrive. */
  readonly spanMs: number;
}

/** Polls and interactive calls for `spanMs` (and on), then `starts` starts at once, and a minute later `aborts` aborts. */
function play(options: RequestBudgetOptions, traffic: Traffic, starts: number, aborts: number) {
  const sim = new Simulation(options);
  const agenda = new Agenda(sim, (sent) => {
    agenda.at(sent.at + 100, () => {
      sim.report(sent.ticket);
      if (sent.ticket.priority === 'status') sim.enqueue(ticket('status', sent.ticket.key));
    });
  });
  for (let index = 0; index < traffic.runs; index++) agenda.at(0, () => sim.enqueue(ticket('status', `we-${index}`)));
  const every = traffic.interactiveEveryMs;
  const interact = (): void => {
    sim.enqueue(ticket('interactive'));
    if (every !== undefined && sim.now + every < traffic.spanMs + 3 * MINUTE) agenda.at(sim.now + every, interact);
  };
  if (every !== undefined) agenda.at(0, interact);
  const startIds: number[] = [];
  const abortIds: number[] = [];
  agenda.at(traffic.spanMs, () => {
    for (let index = 0; index < starts; index++) startIds.push(sim.enqueue(ticket('start', `c-${index} {}`)));
  });
  agenda.at(traffic.spanMs + MINUTE, () => {
    for (let index = 0; index < aborts; index++) abortIds.push(sim.enqueue(ticket('abort', `we-${index}`)));
  });
  agenda.runUntil(traffic.spanMs + 3 * MINUTE);
  return { sim, startIds, abortIds };
}

const isPaced = (sent: Sent): boolean => sent.ticket.priority !== 'start' && sent.ticket.priority !== 'abort';

describe('the day\'s reserve', () => {
  it('is never taken by polls or interactive calls, and a start or an abort always finds it', () => {
    fc.assert(
      fc.property(
        fc.record({ requestsPerDay: fc.integer({ min: 40, max: 3_000 }), dayReserve: fc.constantFrom(0.05, 0.1, 0.3), dayBurst: fc.constantFrom(0.05, 0.1, 0.5) }),
        fc.record({
          runs: fc.integer({ min: 1, max: 30 }),
          interactiveEveryMs: fc.option(fc.integer({ min: 2_000, max: 600_000 }), { nil: undefined }),
          spanMs: fc.integer({ min: 0, max: 2 * DAY }),
        }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        (options, traffic, startsWanted, abortsWanted) => {
          const limits = budgetLimits(options);
          const forStarts = limits.startsPerDay - limits.usablePerDay;
          const forAborts = limits.perDay - limits.startsPerDay;
          const { sim, startIds, abortIds } = play(options, traffic, startsWanted, Math.min(abortsWanted, forAborts));
          // No poll and no interactive call went with the day window (itself included) at the usable day
          // or beyond, no start beyond its half of the reserve, nothing beyond the day.
          expect(mostUpToEach(sim.sent, isPaced, DAY)).toBeLessThanOrEqual(limits.usablePerDay);
          expect(mostUpToEach(sim.sent, (sent) => sent.ticket.priority === 'start', DAY)).toBeLessThanOrEqual(limits.startsPerDay);
          expect(maxInAnyWindow(sim.sent.map((sent) => sent.at), DAY)).toBeLessThanOrEqual(limits.perDay);
          // The starts the reserve keeps for them went within the minute; none waited for the day: the
          // others went too, or were refused as soon as the day could take no more (they only waited
          // their turn in the minute).
          const startedAt = startIds.map((id) => sim.sentAt(id));
          for (const at of startedAt.slice(0, forStarts)) expect(at).toBeLessThanOrEqual(traffic.spanMs + MINUTE);
          const refused = new Set(sim.refused.map((refusal) => refusal.id));
          for (const [index, id] of startIds.entries()) expect(startedAt[index] !== undefined || refused.has(id)).toBe(true);
          for (const refusal of sim.refused) expect(refusal.at).toBeLessThanOrEqual(traffic.spanMs + MINUTE);
          // Every abort went within the minute, whatever the polls and the starts had spent. (Aborts
          // count against the starts' half too: an abort before them leaves them less.)
          for (const id of abortIds) expect(sim.sentAt(id)).toBeLessThanOrEqual(traffic.spanMs + 2 * MINUTE);
        },
      ),
      { numRuns: 40 },
    );
    // CPU-bound simulations, about 5 s alone: a machine at load 20 runs them several times slower.
  }, 60_000);
});

describe('a spent day', () => {
  it('refuses a start at once, saying when the day can take one again, while polls wait and aborts still go', () => {
    // 100 a day: polls stop at 80, starts at 90, aborts at 100.
    const sim = new Simulation({ requestsPerDay: 100, dayReserve: 0.2 });
    for (let index = 0; index < 90; index++) sim.enqueue(ticket('start', `c-${index} {}`));
    sim.advanceTo(10 * MINUTE);
    expect(sim.sent).toHaveLength(90);
    const poll = sim.enqueue(ticket('status', 'we-late'));
    const start = sim.enqueue(ticket('start', 'c-late {}'));
    // The day's window frees a start when the first of the 90 leaves it: the day counts by minute, so
    // once the whole minute it was sent in has.
    const firstMinuteEnd = (Math.floor(sim.sent[0]!.at / 60_000) + 1) * 60_000;
    expect(sim.refused).toEqual([{ id: start, at: sim.now, resetAt: firstMinuteEnd + DAY }]);
    const aborts = Array.from({ length: 10 }, (_, index) => sim.enqueue(ticket('abort', `we-${index}`)));
    sim.advanceTo(sim.now + MINUTE);
    expect(aborts.every((id) => sim.sentAt(id) !== undefined)).toBe(true);
    // The poll waits for the day's window: it is neither refused nor sent, then goes once sends leave it.
    expect(sim.snapshot().queued).toMatchObject({ total: 1, byPriority: { status: 1 } });
    sim.advanceTo(DAY - 1);
    expect(sim.sentAt(poll)).toBeUndefined();
    sim.advanceTo(2 * DAY);
    expect(sim.sentAt(poll)).toBeGreaterThanOrEqual(DAY);
  });

  it('refuses a waiting start as soon as an answer shows the day spent by another process; aborts still go', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-0'));
    sim.advanceTo(100);
    sim.report(ticket('status', 'we-0'), 429);
    const waiting = sim.enqueue(ticket('start', 'c-1 {}'));
    sim.advanceTo(200);
    expect(sim.sentAt(waiting)).toBeUndefined();
    // Another process has spent the day: 200 left, less than the 250 the reserve keeps for aborts.
    sim.report(ticket('status', 'we-1'), 200, { remainingPerDay: 200 });
    expect(sim.refused).toEqual([{ id: waiting, at: 200, resetAt: 200 + DAY }]);
    const late = sim.enqueue(ticket('start', 'c-2 {}'));
    expect(sim.refused.at(-1)).toEqual({ id: late, at: 200, resetAt: 200 + DAY });
    // The abort waits only for the 429's pause, not for the day's cap.
    const abort = sim.enqueue(ticket('abort', 'we-0'));
    sim.advanceTo(2 * MINUTE);
    expect(sim.sentAt(abort)).toBe(MINUTE);
  });

  it('lets a start take the reserve the service\'s count still leaves it, when polls may no longer go', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-0'));
    sim.advanceTo(100);
    // 400 left: below the reserve of 500 (polls stop), above the 250 kept for aborts (starts go).
    sim.report(ticket('status', 'we-0'), 200, { remainingPerDay: 400 });
    const poll = sim.enqueue(ticket('status', 'we-1'));
    const start = sim.enqueue(ticket('start', 'c-1 {}'));
    expect(sim.sentAt(start)).toBe(100);
    expect(sim.sentAt(poll)).toBeUndefined();
    expect(sim.snapshot().day).toMatchObject({ remaining: 399, burst: 0, sustainablePerMinute: 0 });
  });
});
