import { describe, expect, it } from 'vitest';
import { AccountCounter, Agenda, Simulation, ticket } from './simulation.js';

interface Setup {
  readonly runs: number;
  readonly travelMs: number;
  readonly serviceMs: number;
  /** Another process on the same account sending one request every this many ms. */
  readonly otherEveryMs?: number;
  readonly durationMs: number;
}

/** Runs polling through the budget against the service's real counter, answers carrying its headers. */
function playAgainstTheService(setup: Setup) {
  const sim = new Simulation();
  const account = new AccountCounter();
  let ours429 = 0;
  let capped = false;
  const agenda = new Agenda(sim, (sent) => {
    agenda.at(sent.at + setup.travelMs, () => {
      const answer = account.arrive(sim.now);
      if (answer.httpStatus === 429) ours429++;
      agenda.at(sim.now + setup.serviceMs, () => {
        sim.report(sent.ticket, answer.httpStatus, { remainingPerMinute: answer.remainingPerMinute });
        capped ||= sim.account.record.minuteCap !== null;
        const key = sent.ticket.key ?? 'none';
        agenda.at(sim.now + 200, () => {
          sim.enqueue(ticket('status', key));
        });
      });
    });
  });
  for (let index = 0; index < setup.runs; index++) {
    agenda.at(0, () => {
      sim.enqueue(ticket('status', `we-${index}`));
    });
  }
  const every = setup.otherEveryMs;
  if (every !== undefined) {
    for (let at = 0; at < setup.durationMs; at += every) {
      agenda.at(at, () => {
        account.arrive(sim.now);
      });
    }
  }
  agenda.runUntil(setup.durationMs);
  return { sent: sim.sent.length, ours429, capped };
}

describe('against the service\'s own counter', () => {
  it('is never refused and never mistakes its own slow answers for another process', () => {
    const result = playAgainstTheService({ runs: 50, travelMs: 300, serviceMs: 4_000, durationMs: 10 * 60_000 });
    expect(result.ours429).toBe(0);
    expect(result.capped).toBe(false);
    // Saturated: about 88 sends a minute (one per 682 ms after the first burst).
    expect(result.sent).toBeGreaterThanOrEqual(875);
  });

  it('makes room for another process on the account and is not refused', () => {
    const result = playAgainstTheService({ runs: 50, travelMs: 100, serviceMs: 200, otherEveryMs: 1_500, durationMs: 10 * 60_000 });
    expect(result.capped).toBe(true);
    expect(result.ours429).toBe(0);
    // The other process takes 40 a minute; we keep most of the rest.
    expect(result.sent).toBeGreaterThanOrEqual(400);
  });
});
