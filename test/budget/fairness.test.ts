import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/budget/fair-queue.js';
import { Agenda, maxInAnyWindow, serviceRejections, Simulation, ticket } from './simulation.js';

/**
 * Runs polling the way the run layer does: each key asks for a status, gets its answer after
 * `latencyMs`, waits `pauseMs` (its own cadence) and asks again.
 */
function pollMany(keys: number, pauseMs: number, durationMs: number, latencyMs = 100) {
  const sim = new Simulation();
  const enqueuedAt = new Map<number, number>();
  const waits: number[] = [];
  const perKey = new Map<string, number>();
  const agenda = new Agenda(sim, (sent) => {
    waits.push(sent.at - enqueuedAt.get(sent.id)!);
    perKey.set(sent.ticket.key!, (perKey.get(sent.ticket.key!) ?? 0) + 1);
    agenda.at(sent.at + latencyMs, () => {
      sim.report(sent.ticket);
      agenda.at(sim.now + pauseMs, () => { poll(sent.ticket.key!); });
    });
  });
  const poll = (key: string): void => {
    const id = sim.enqueue(ticket('status', key));
    enqueuedAt.set(id, sim.now);
  };
  for (let index = 0; index < keys; index++) agenda.at(0, () => { poll(`we-${index}`); });
  agenda.runUntil(durationMs);
  return { sim, waits, counts: [...perKey.values()] };
}

describe('fair sharing among many runs', () => {
  it('gives 50 runs polling every 200 ms an equal share of 100/min, none waiting much longer than its turn', () => {
    const { sim, waits, counts } = pollMany(50, 200, 10 * 60_000);
    expect(counts).toHaveLength(50);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    // Round-robin: a poll waits for the other 49 at one send per 682 ms, plus its own 300 ms away.
    expect(Math.max(...waits.slice(50))).toBeLessThanOrEqual(50 * 682);
    const times = sim.sent.map((sent) => sent.at);
    expect(maxInAnyWindow(times, 60_000)).toBeLessThanOrEqual(100);
    expect(serviceRejections(times, 100)).toBe(0);
  });

  it('stretches each run\'s cadence evenly when the budget is tight', () => {
    const { sim } = pollMany(50, 200, 10 * 60_000);
    const intervals = Object.values(sim.snapshot().cadences).map((cadence) => cadence.intervalMs!);
    expect(intervals).toHaveLength(50);
    // 50 runs sharing one send per 682 ms: each polls about every 34 s.
    for (const interval of intervals) expect(interval).toBeGreaterThan(30_000);
    for (const interval of intervals) expect(interval).toBeLessThan(36_000);
  });

  it('never makes a poll wait longer than one turn of the round-robin, whatever the number of runs and their cadence', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 1_500 }), (runs, pauseMs, latencyMs) => {
        const { waits, counts } = pollMany(runs, pauseMs, 5 * 60_000, latencyMs);
        // At most the other runs' polls are ahead of it, one per 682 ms.
        expect(Math.max(...waits)).toBeLessThanOrEqual(runs * 682);
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 40 },
    );
  });

  it('keeps each run at its own cadence when the budget is loose', () => {
    const { sim, waits } = pollMany(2, 2_000, 5 * 60_000);
    expect(Math.max(...waits)).toBe(0);
    for (const cadence of Object.values(sim.snapshot().cadences)) expect(cadence.intervalMs).toBe(2_100);
  });
});

describe('the fair queue\'s memory of runs', () => {
  it('forgets a run once its turn is past, whatever other classes did, and keeps at most 1,024 idle keys of a class whose turn never moves', () => {
    const queue = new FairQueue();
    let id = 0;
    const send = (priority: 'abort' | 'status', key: string): void => {
      const entry = queue.enqueue(id++, { endpoint: priority === 'abort' ? 'abort' : 'status', priority, key }, 0);
      queue.offer(entry);
      queue.served(entry);
      queue.remove(entry.id);
    };
    // One abort first: its flow rests at the abort class's turn.
    send('abort', 'we-aborted');
    // Then 5,000 runs each read once in turn after another's: each is forgotten once the turn passed it.
    for (let run = 0; run < 5_000; run += 1) {
      send('status', `we-${run}`);
      send('status', `we-${run}`);
    }
    expect(queue.flowCount('reads')).toBeLessThanOrEqual(1);
    // 5,000 aborts of distinct executions: the abort class's turn never moves (each key comes once).
    for (let run = 0; run < 5_000; run += 1) send('abort', `we-${run}`);
    expect(queue.flowCount('abort')).toBeLessThanOrEqual(1_024);
  });
});
