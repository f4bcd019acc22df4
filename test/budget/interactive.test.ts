import { describe, expect, it } from 'vitest';
import { Agenda, Simulation, ticket } from './simulation.js';

const PACE = 682;

/** 50 runs polling back to back (each answered after 100 ms), and what else `also` enqueues meanwhile. */
function busy(also: (sim: Simulation, agenda: Agenda) => void, durationMs: number): Simulation {
  const sim = new Simulation();
  const agenda = new Agenda(sim, (sent) => {
    agenda.at(sent.at + 100, () => {
      sim.report(sent.ticket);
      if (sent.ticket.priority === 'status') sim.enqueue(ticket('status', sent.ticket.key));
    });
  });
  for (let index = 0; index < 50; index++) agenda.at(0, () => sim.enqueue(ticket('status', `we-${index}`)));
  also(sim, agenda);
  agenda.runUntil(durationMs);
  return sim;
}

describe('interactive calls go ahead of the runs\' polls', () => {
  it('sends a call a person waits on at the next turn, with 50 runs polling, and a start before it', () => {
    const ids: Record<string, number> = {};
    const sim = busy((sim, agenda) => {
      agenda.at(60_000, () => {
        ids['search'] = sim.enqueue(ticket('interactive'));
        ids['start'] = sim.enqueue(ticket('start', 'c-1 {}'));
      });
    }, 120_000);
    const next = sim.sent.find((sent) => sent.at >= 60_000)!.at;
    // Measured before the interactive class: such calls went out ~7 s apart, a start 42 s late.
    expect(sim.sentAt(ids['start']!)).toBe(next);
    expect(sim.sentAt(ids['search']!)).toBe(next + PACE);
  });

  it('serves interactive calls in arrival order at the pacer\'s pace, however many runs poll', () => {
    const calls: number[] = [];
    const sim = busy((sim, agenda) => {
      agenda.at(30_000, () => {
        for (let index = 0; index < 5; index++) calls.push(sim.enqueue(ticket('interactive', `c-${index}`)));
      });
    }, 60_000);
    const times = calls.map((id) => sim.sentAt(id)!);
    const first = sim.sent.find((sent) => sent.at >= 30_000)!.at;
    expect(times).toEqual([0, 1, 2, 3, 4].map((turn) => first + turn * PACE));
  });

  it('still gives the runs a tenth of the budget while interactive calls saturate it: reads never starve', () => {
    const sim = busy((sim, agenda) => {
      const keepAsking = (): void => {
        sim.enqueue(ticket('interactive'));
        agenda.at(sim.now + 200, keepAsking);
      };
      agenda.at(0, keepAsking);
    }, 10 * 60_000);
    const later = sim.sent.filter((sent) => sent.at >= 60_000);
    const reads = later.filter((sent) => sent.ticket.priority === 'status').length;
    expect(reads / later.length).toBeGreaterThan(0.095);
    expect(reads / later.length).toBeLessThan(0.12);
  });
});
