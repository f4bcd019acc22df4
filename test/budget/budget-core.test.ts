import { describe, expect, it } from 'vitest';
import { Simulation, ticket } from './simulation.js';

// Defaults: 95 usable per 62 s window, burst 5, one send every 682 ms at the steady pace.
const PACE = 682;

describe('budget core: pacing', () => {
  it('lets requests under the limit go at once, with no added latency', () => {
    const sim = new Simulation();
    sim.enqueue(ticket('status', 'we-1'));
    sim.advanceBy(5_000);
    sim.enqueue(ticket('status', 'we-1'));
    expect(sim.sent.map((sent) => sent.at)).toEqual([0, 5_000]);
    expect(sim.wakeAt).toBeUndefined();
  });

  it('sends a burst of five, then spreads the rest one interval apart', () => {
    const sim = new Simulation();
    for (let index = 0; index < 10; index++) sim.enqueue(ticket('status', `we-${index}`));
    sim.advanceTo(60_000);
    expect(sim.sent.map((sent) => sent.at)).toEqual([0, 0, 0, 0, 0, PACE, 2 * PACE, 3 * PACE, 4 * PACE, 5 * PACE]);
  });

  it('asks to be woken exactly when the next request may go, and not at all once the queue is empty', () => {
    const sim = new Simulation({ burst: 1 });
    sim.enqueue(ticket('status', 'we-1'));
    sim.enqueue(ticket('status', 'we-2'));
    // Without a burst the pace is ⌈62,000 / 95⌉ ms.
    expect(sim.wakeAt).toBe(653);
    sim.advanceTo(sim.wakeAt!);
    expect(sim.sent).toHaveLength(2);
    expect(sim.wakeAt).toBeUndefined();
  });

  it('follows the configured limit', () => {
    const sim = new Simulation({ requestsPerMinute: 10, burst: 1 });
    for (let index = 0; index < 4; index++) sim.enqueue(ticket('status', `we-${index}`));
    sim.advanceTo(60_000);
    // 10 per minute, no margin left by 5% of 10: one send every 62 s / 10.
    expect(sim.sent.map((sent) => sent.at)).toEqual([0, 6_200, 12_400, 18_600]);
  });
});

describe('budget core: priorities', () => {
  it('sends abort, then start, an interactive call, then the runs\' status and output when they wait together', () => {
    const sim = new Simulation();
    for (let index = 0; index < 5; index++) sim.enqueue(ticket('status', `busy-${index}`));
    sim.enqueue(ticket('status', 'we-1'));
    sim.enqueue(ticket('output', 'we-3'));
    sim.enqueue(ticket('interactive'));
    sim.enqueue(ticket('start', 'c-1 {}'));
    sim.enqueue(ticket('abort', 'we-2'));
    sim.advanceTo(10_000);
    expect(sim.sent.slice(5).map((sent) => sent.ticket.priority)).toEqual(['abort', 'start', 'interactive', 'status', 'output']);
  });

  it("serves a run's output read in the run's round-robin turn, not behind every other run's status", () => {
    const sim = new Simulation();
    for (let index = 0; index < 5; index++) sim.enqueue(ticket('status', `busy-${index}`));
    for (let index = 0; index < 20; index++) sim.enqueue(ticket('status', `we-${index}`));
    const output = sim.enqueue(ticket('output', 'we-x'));
    for (let index = 20; index < 40; index++) sim.enqueue(ticket('status', `we-${index}`));
    sim.advanceTo(60_000);
    // Every run waiting has one turn per round: the output goes right after the 20 reads queued before it.
    expect(sim.sent.findIndex((sent) => sent.id === output)).toBe(5 + 20);
  });

  it('lets a waiting lower priority go after nine requests overtook it, so no class starves', () => {
    const sim = new Simulation();
    for (let index = 0; index < 40; index++) sim.enqueue(ticket('interactive', `c-${index}`));
    const poll = sim.enqueue(ticket('status', 'we-1'));
    sim.advanceTo(60_000);
    const position = sim.sent.findIndex((sent) => sent.id === poll);
    // Five interactive calls left in the burst before the poll arrived; then nine overtook it.
    expect(position).toBe(5 + 9);
  });

  it('takes the starvation limit from the options', () => {
    const sim = new Simulation({ starvationLimit: 2 });
    for (let index = 0; index < 20; index++) sim.enqueue(ticket('interactive', `c-${index}`));
    const poll = sim.enqueue(ticket('status', 'we-1'));
    sim.advanceTo(60_000);
    expect(sim.sent.findIndex((sent) => sent.id === poll)).toBe(5 + 2);
  });

  it('never holds an abort back for a starving lower priority', () => {
    const sim = new Simulation({ starvationLimit: 1 });
    for (let index = 0; index < 5; index++) sim.enqueue(ticket('status', `busy-${index}`));
    sim.enqueue(ticket('status', 'we-0'));
    const aborts = [sim.enqueue(ticket('abort', 'we-1')), sim.enqueue(ticket('abort', 'we-2')), sim.enqueue(ticket('abort', 'we-3'))];
    sim.advanceTo(10_000);
    expect(sim.sent.slice(5, 8).map((sent) => sent.id)).toEqual(aborts);
  });
});

describe('budget core: fairness within a priority', () => {
  it('goes round-robin by key when one key queues several requests', () => {
    const sim = new Simulation({ burst: 1 });
    sim.enqueue(ticket('output', 'busy'));
    for (let index = 0; index < 3; index++) sim.enqueue(ticket('output', 'greedy'));
    sim.enqueue(ticket('output', 'we-a'));
    sim.enqueue(ticket('output', 'we-b'));
    sim.advanceTo(60_000);
    expect(sim.sent.map((sent) => sent.ticket.key)).toEqual(['busy', 'greedy', 'we-a', 'we-b', 'greedy', 'greedy']);
  });

  it('serves requests without a key in arrival order', () => {
    const sim = new Simulation({ burst: 1 });
    const ids = [sim.enqueue(ticket('interactive')), sim.enqueue(ticket('interactive')), sim.enqueue(ticket('interactive'))];
    sim.advanceTo(60_000);
    expect(sim.sent.map((sent) => sent.id)).toEqual(ids);
  });
});

describe('budget core: dropping queued work', () => {
  it('removes a cancelled request at once and frees nothing else', () => {
    const sim = new Simulation();
    for (let index = 0; index < 5; index++) sim.enqueue(ticket('status', `busy-${index}`));
    const first = sim.enqueue(ticket('status', 'we-1'));
    const dropped = sim.enqueue(ticket('status', 'we-2'));
    const third = sim.enqueue(ticket('status', 'we-3'));
    sim.cancel(dropped);
    expect(sim.snapshot().queued).toMatchObject({ total: 2, byPriority: { status: 2 } });
    sim.advanceTo(60_000);
    expect(sim.sentAt(dropped)).toBeUndefined();
    // The pace is unchanged: the cancelled request gave back no slot to spend early.
    expect([sim.sentAt(first), sim.sentAt(third)]).toEqual([PACE, 2 * PACE]);
  });

  it('needs no wake-up once the last waiting request is cancelled', () => {
    const sim = new Simulation();
    for (let index = 0; index < 5; index++) sim.enqueue(ticket('status', `busy-${index}`));
    const waiting = sim.enqueue(ticket('status', 'we-1'));
    expect(sim.wakeAt).toBe(PACE);
    sim.cancel(waiting);
    expect(sim.wakeAt).toBeUndefined();
  });
});
