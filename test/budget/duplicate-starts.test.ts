import { describe, expect, it } from 'vitest';
import { Simulation, ticket } from './simulation.js';

const START = ticket('start', 'c-1 {"variables":{"q":"x"}}');

describe('identical starts (service.md §2.2)', () => {
  it('holds an identical start until the previous one is answered, then more than 1 s longer', () => {
    const sim = new Simulation();
    const first = sim.enqueue(START);
    const second = sim.enqueue(START);
    expect(sim.sentAt(first)).toBe(0);
    sim.advanceTo(5_000);
    expect(sim.sentAt(second)).toBeUndefined();
    sim.report(START, 200);
    sim.advanceTo(6_099);
    expect(sim.sentAt(second)).toBeUndefined();
    sim.advanceTo(10_000);
    expect(sim.sentAt(second)).toBe(6_100);
  });

  it('measures from the send when the answer comes at once, and spaces a failed attempt\'s retry too', () => {
    const sim = new Simulation();
    sim.enqueue(START);
    sim.report(START, undefined);
    const retry = sim.enqueue(START);
    sim.advanceTo(10_000);
    expect(sim.sentAt(retry)).toBe(1_100);
  });

  it('lets different starts and other requests pass a held start', () => {
    const sim = new Simulation();
    sim.enqueue(START);
    const held = sim.enqueue(START);
    const other = sim.enqueue(ticket('start', 'c-1 {}'));
    const status = sim.enqueue(ticket('status', 'we-1'));
    expect([sim.sentAt(other), sim.sentAt(status), sim.sentAt(held)]).toEqual([0, 0, undefined]);
  });

  it('takes the spacing from the options', () => {
    const sim = new Simulation({ duplicateStartSpacingMs: 3_000 });
    sim.enqueue(START);
    sim.advanceTo(200);
    sim.report(START, 409);
    const retry = sim.enqueue(START);
    sim.advanceTo(10_000);
    expect(sim.sentAt(retry)).toBe(3_200);
  });

  it('forgets a start once its spacing has passed', () => {
    const sim = new Simulation();
    sim.enqueue(START);
    sim.report(START, 200);
    sim.advanceTo(2_000);
    sim.enqueue(ticket('status', 'we-1'));
    expect(Object.keys(sim.account.record.starts).length).toBe(0);
  });
});
