import { describe, expect, it } from 'vitest';
import { Simulation, ticket } from './simulation.js';

describe('budget state for UIs and logs', () => {
  it('counts what was used in the service\'s windows and what is left', () => {
    const sim = new Simulation();
    for (let index = 0; index < 3; index++) sim.enqueue(ticket('status', `we-${index}`));
    sim.advanceTo(61_000);
    sim.enqueue(ticket('interactive'));
    expect(sim.snapshot()).toMatchObject({
      at: 61_000,
      limitPerMinute: 100,
      limitPerDay: 10_000,
      usedThisMinute: 1,
      remainingThisMinute: 99,
      usedToday: 4,
      remainingToday: 9_996,
      inFlight: 4,
      nextSendAt: 61_000,
      followingServer: false,
    });
  });

  it('shows queue depth per priority and when the next request may go', () => {
    const sim = new Simulation();
    for (let index = 0; index < 5; index++) sim.enqueue(ticket('status', `busy-${index}`));
    sim.enqueue(ticket('output', 'we-1'));
    sim.enqueue(ticket('output', 'we-2'));
    sim.enqueue(ticket('start', 'c-3'));
    expect(sim.snapshot()).toMatchObject({
      queued: { total: 3, byPriority: { abort: 0, start: 1, interactive: 0, status: 0, output: 2 } },
      nextSendAt: 682,
    });
  });

  it('shows the service\'s own count, the pause after a 429 and that it follows the service', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-1'));
    sim.advanceTo(200);
    sim.report(ticket('status', 'we-1'), 429, { remainingPerMinute: 0, remainingPerDay: 7_000 });
    const state = sim.snapshot();
    expect(state).toMatchObject({ server: { remainingPerMinute: 0, remainingPerDay: 7_000, at: 200 }, pausedUntil: 62_000, nextSendAt: 62_000, followingServer: true, inFlight: 0 });
    expect(sim.snapshot(62_000).pausedUntil).toBeUndefined();
  });

  it('shows each run\'s effective poll interval and how long its last poll waited', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-1'));
    sim.advanceTo(2_000);
    sim.enqueue(ticket('status', 'we-1'));
    sim.enqueue(ticket('output', 'we-1'));
    expect(sim.snapshot().cadences).toEqual({ 'we-1': { lastSentAt: 2_000, intervalMs: 2_000, waitMs: 0 } });
  });

  it('forgets a run that has stopped polling for a window', () => {
    const sim = new Simulation();
    const poll = ticket('status', 'we-1');
    sim.enqueue(poll);
    sim.report(poll);
    sim.advanceTo(62_000);
    sim.enqueue(ticket('interactive'));
    expect(sim.snapshot().cadences).toEqual({});
  });

  it('is plain data that survives JSON', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-1'));
    const state = sim.snapshot();
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });
});
