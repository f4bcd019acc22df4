import { describe, expect, it } from 'vitest';
import { maxInAnyWindow, Simulation, ticket } from './simulation.js';

const WINDOW = 62_000; // the service's 60 s plus the 2 s latency allowance

function abortsAt(sim: Simulation): number[] {
  return sim.sent.filter((sent) => sent.ticket.priority === 'abort').map((sent) => sent.at);
}

describe('aborts always go', () => {
  it('drains a mass abort at the service\'s own limit, not the pacer\'s: 60 at once after a busy spell, none over the limit', () => {
    const sim = new Simulation();
    // A busy client: its pacer is well into its debt when every run is left at once.
    for (let index = 0; index < 30; index++) sim.enqueue(ticket('status', `we-${index}`));
    sim.advanceTo(10_000);
    const polled = sim.sent.length;
    for (let index = 0; index < 60; index++) sim.enqueue(ticket('abort', `we-${index}`));
    sim.advanceTo(10 * WINDOW);
    const aborts = abortsAt(sim);
    expect(aborts).toHaveLength(60);
    // The pacer alone (one per 682 ms) would have needed ~40 s; the aborts only wait for the count.
    expect(aborts.every((at) => at === 10_000)).toBe(true);
    const all = sim.sent.map((sent) => sent.at);
    expect(maxInAnyWindow(all, WINDOW)).toBeLessThanOrEqual(100);
    expect(polled + 60).toBeLessThanOrEqual(100);
  });

  it('spreads a mass abort larger than the limit over the service\'s windows, never more than the limit in one', () => {
    const sim = new Simulation();
    for (let index = 0; index < 250; index++) sim.enqueue(ticket('abort', `we-${index}`));
    sim.advanceTo(10 * WINDOW);
    const aborts = abortsAt(sim);
    expect(aborts).toHaveLength(250);
    expect(maxInAnyWindow(aborts, WINDOW)).toBe(100);
    expect(aborts.at(-1)).toBe(2 * WINDOW);
  });

  it('goes ahead of a server cap\'s spread while the service\'s count allows it, and waits for the window once it is spent', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-0'));
    sim.advanceTo(100);
    // Another process has used the account: the service says 2 remain (below our reserve of 5).
    sim.report(ticket('status', 'we-0'), 200, { remainingPerMinute: 2 });
    const poll = sim.enqueue(ticket('status', 'we-1'));
    const aborts = [1, 2, 3].map((index) => sim.enqueue(ticket('abort', `we-${index}`)));
    sim.advanceTo(WINDOW + 1_000);
    expect(aborts.map((id) => sim.sentAt(id))).toEqual([100, 100, WINDOW]);
    // The poll waited for the window: the cap left it nothing.
    expect(sim.sentAt(poll)).toBeGreaterThanOrEqual(WINDOW);
  });

  it('after a 429, sends a waiting abort as soon as the window can have reset, ahead of every poll', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-0'));
    sim.advanceTo(500);
    sim.report(ticket('status', 'we-0'), 429, { remainingPerMinute: 0 });
    for (let index = 1; index < 5; index++) sim.enqueue(ticket('status', `we-${index}`));
    const abort = sim.enqueue(ticket('abort', 'we-9'));
    sim.advanceTo(WINDOW - 1);
    expect(sim.sentAt(abort)).toBeUndefined();
    sim.advanceTo(2 * WINDOW);
    expect(sim.sentAt(abort)).toBe(WINDOW);
    expect(sim.sent[1]!.id).toBe(abort);
  });
});
