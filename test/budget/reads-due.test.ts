import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairQueue, type ReadOrder } from '../../src/budget/fair-queue.js';
import { FAIR_FLOOR_MS, MAX_DEFER_ROUNDS, retimedForShare } from '../../src/budget/budget-core.js';
import type { ReadNeed } from '../../src/domain/budget.js';
import type { GateTicket } from '../../src/domain/requests.js';
import { Simulation, ticket } from './simulation.js';

const read = (key: string): GateTicket => ({ endpoint: 'status', priority: 'status', key });
const flat: ReadOrder = { certain: false, defer: 0 };

/** Serves the reads class to the end, in its order. */
function drain(queue: FairQueue): string[] {
  const served: string[] = [];
  for (let entry = queue.of('reads').next(); entry !== undefined; entry = queue.of('reads').next()) {
    queue.served(entry);
    queue.remove(entry.id);
    served.push(entry.ticket.key ?? '');
  }
  return served;
}

describe('the order of a run\'s reads', () => {
  it('serves first the read whose change is likeliest: the least deferred, when only one can go', () => {
    const queue = new FairQueue();
    [['a', 1.8], ['b', 0.4], ['c', 0], ['d', 1.1]].forEach(([key, defer], id) => {
      queue.offer(queue.enqueue(id, read(String(key)), 5_000, { certain: false, defer: Number(defer) }));
    });
    expect(drain(queue)).toEqual(['c', 'b', 'd', 'a']);
  });

  it('keeps the round-robin when no read is deferred: with a flat model nothing changes', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 5 })), { maxLength: 30 }), (arrivals) => {
        const placed = new FairQueue();
        const plain = new FairQueue();
        let now = 0;
        arrivals.forEach(([key, gap], id) => {
          now += gap;
          placed.offer(placed.enqueue(id, read(key), now, flat));
          plain.offer(plain.enqueue(id, read(key), now));
        });
        expect(drain(placed)).toEqual(drain(plain));
      }),
    );
  });

  it('puts a deferred read back by its deferral, at most MAX_DEFER_ROUNDS turns: a later round\'s reads do not pass it for ever', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: MAX_DEFER_ROUNDS, noNaN: true }), fc.integer({ min: 1, max: 6 }), (defer, others) => {
        const queue = new FairQueue();
        let id = 0;
        queue.offer(queue.enqueue(id++, read('late'), 0, { certain: false, defer }));
        // Every other run keeps a read waiting, round after round.
        const keys = Array.from({ length: others }, (_, index) => `run-${String(index)}`);
        for (const key of keys) queue.offer(queue.enqueue(id++, read(key), 0, flat));
        let turnsAhead = 0;
        for (;;) {
          const next = queue.of('reads').next()!;
          queue.served(next);
          queue.remove(next.id);
          if (next.ticket.key === 'late') break;
          turnsAhead += 1;
          queue.offer(queue.enqueue(id++, read(next.ticket.key!), 0, flat));
        }
        expect(turnsAhead).toBeLessThanOrEqual(others * (MAX_DEFER_ROUNDS + 1));
        expect(turnsAhead).toBeLessThanOrEqual(others * Math.ceil(defer));
      }),
    );
  });

  it('lets both reads of a run\'s end cut in, its status and the output read that completes it, after its read was served in the current turn', () => {
    const queue = new FairQueue();
    let id = 0;
    // The run's read goes first in the turn; three other runs still wait in it.
    for (const key of ['end', 'a', 'b', 'c']) queue.offer(queue.enqueue(id++, read(key), 0, flat));
    const served = (): string => {
      const next = queue.of('reads').next()!;
      queue.served(next);
      queue.remove(next.id);
      return next.ticket.key!;
    };
    expect(served()).toBe('end');
    // That read found every node done: the status read that sees the end is certain, then the output read that completes it.
    queue.offer(queue.enqueue(id++, read('end'), 0, { certain: true, defer: 0 }));
    expect(served()).toBe('end');
    queue.offer(queue.enqueue(id, { endpoint: 'output', priority: 'output', key: 'end' }, 0, { certain: true, defer: 0 }));
    expect(served()).toBe('end');
    expect([served(), served(), served()]).toEqual(['a', 'b', 'c']);
  });

  it('lets a certain read go ahead of the waiting turns, once, and puts its run\'s next read a turn later', () => {
    const queue = new FairQueue();
    let id = 0;
    for (const key of ['a', 'b', 'c']) queue.offer(queue.enqueue(id++, read(key), 0, flat));
    queue.offer(queue.enqueue(id++, read('end'), 0, { certain: true, defer: 0 }));
    const first = queue.of('reads').next()!;
    expect(first.ticket.key).toBe('end');
    queue.served(first);
    queue.remove(first.id);
    // Its next read (not certain) waits behind this round and the next round's first turns.
    queue.offer(queue.enqueue(id++, read('end'), 0, flat));
    const order: string[] = [];
    for (let entry = queue.of('reads').next(); entry !== undefined && order.length < 3; entry = queue.of('reads').next()) {
      queue.served(entry);
      queue.remove(entry.id);
      order.push(entry.ticket.key!);
      queue.offer(queue.enqueue(id++, read(entry.ticket.key!), 0, flat));
    }
    expect(order).toEqual(['a', 'b', 'c']);
    // A run that keeps finding its reads certain cuts in within its next two turns only (its status and output), not a third.
    const greedy = new FairQueue();
    for (const key of ['x', 'y']) greedy.offer(greedy.enqueue(100 + key.charCodeAt(0), read(key), 0, flat));
    const cutIns: boolean[] = [];
    for (let turn = 0; turn < 3; turn += 1) {
      const entry = greedy.enqueue(turn, read('greedy'), 0, { certain: true, defer: 0 });
      cutIns.push(entry.cutsIn);
      greedy.offer(entry);
      const next = greedy.of('reads').next()!;
      if (next.id === entry.id) {
        greedy.served(next);
        greedy.remove(next.id);
      }
    }
    expect(cutIns).toEqual([true, true, false]);
  });

  it('keeps a round of many runs going while half of them end in it: their ends cut in spaced, a lone end among a few runs at once', () => {
    /**
     * `runs` runs' reads wait in one turn. As a run's read is served it asks its next: every other
     * run's read found its end, and its next read is certain; the others read on in the next turn.
     * Returns, per grant of the first `grants`, whether it cut in, and the grant of the turn's last read.
     */
    const round = (runs: number, grants: number): { readonly cutIns: boolean[]; readonly lastOfTurn: number } => {
      const queue = new FairQueue();
      let id = 0;
      for (let run = 0; run < runs; run += 1) queue.offer(queue.enqueue(id++, read(`we-${String(run)}`), 0, flat));
      const cutIns: boolean[] = [];
      let lastOfTurn = -1;
      while (cutIns.length < grants) {
        const entry = queue.of('reads').next()!;
        queue.served(entry);
        queue.remove(entry.id);
        cutIns.push(entry.cutsIn);
        if (entry.cutsIn) continue;
        if (entry.tag === 0) lastOfTurn = cutIns.length - 1;
        const ends = entry.tag === 0 && Number(entry.ticket.key!.slice(3)) % 2 === 0;
        queue.offer(queue.enqueue(id++, read(entry.ticket.key!), 0, ends ? { certain: true, defer: 0 } : flat));
      }
      return { cutIns, lastOfTurn };
    };
    // 200 runs, 100 of them ending: each end went ahead of the turn, and its last read was the 300th grant.
    const many = round(200, 400);
    expect(many.cutIns.filter(Boolean)).toHaveLength(100);
    expect(many.lastOfTurn).toBeLessThan(290);
    // Spaced, not put off: between two ends, one read of the turns per 50 of them waiting (about 200: three).
    expect(many.cutIns.slice(0, 10)).toEqual([false, true, false, false, false, true, false, false, false, true]);
    // 20 runs: every end right after the read that found it.
    const few = round(20, 30);
    expect(few.cutIns).toEqual(Array.from({ length: 30 }, (_, grant) => grant % 3 === 1));
    // Among 200 waiting, the output read that completes a run's end goes right after its status read.
    const queue = new FairQueue();
    let id = 0;
    for (let run = 0; run < 200; run += 1) queue.offer(queue.enqueue(id++, read(`we-${String(run)}`), 0, flat));
    const serve = (): string => {
      const next = queue.of('reads').next()!;
      queue.served(next);
      queue.remove(next.id);
      return `${next.ticket.key!} ${next.ticket.endpoint}${next.cutsIn ? ' cut in' : ''}`;
    };
    expect(serve()).toBe('we-0 status');
    queue.offer(queue.enqueue(id++, read('we-0'), 0, { certain: true, defer: 0 }));
    expect(serve()).toBe('we-0 status cut in');
    queue.offer(queue.enqueue(id++, { endpoint: 'output', priority: 'output', key: 'we-0' }, 0, { certain: true, defer: 0 }));
    expect(serve()).toBe('we-0 output cut in');
    // Another run's end is spaced from it: three reads of the turns first.
    expect(serve()).toBe('we-1 status');
    queue.offer(queue.enqueue(id, read('we-1'), 0, { certain: true, defer: 0 }));
    expect([serve(), serve(), serve()]).toEqual(['we-2 status', 'we-3 status', 'we-1 status cut in']);
  });

  it('serves a deferred read in its own turn once its deferral has passed: runs arriving all the time do not pass it for ever', () => {
    // About one read every 31 s once the minute's first reads have gone.
    const sim = new Simulation({ requestsPerMinute: 6 });
    let runs = 0;
    const arrive = (): void => {
      const key = `we-${String(runs++)}`;
      sim.core.need(key, { since: sim.now, minMs: 0, wishMs: 0, maxMs: 10_000 });
      sim.enqueue(ticket('status', key));
    };
    for (let run = 0; run < 6; run += 1) arrive();
    // Its change is far off: deferred as long as a deferral may last.
    sim.core.need('we-late', { since: 0, minMs: 0, wishMs: 0, maxMs: 10_000, likelyAt: 30 * 60_000 });
    const late = sim.enqueue(ticket('status', 'we-late'));
    // A new run every 10 s, its first read due at once: each takes the class's current turn, which so never ends.
    while (sim.now < 10 * 60_000) {
      arrive();
      sim.advanceBy(10_000);
    }
    // Deferred by at most MAX_DEFER_ROUNDS shares of the account (a share: about a minute for the six
    // runs reading when it asked): no run that arrived after that goes before it.
    const lateAt = sim.sentAt(late);
    expect(lateAt).toBeDefined();
    const before = sim.sent.filter((sent) => sent.at < lateAt! && sent.ticket.key !== 'we-late').map((sent) => Number(sent.ticket.key!.slice(3)));
    expect(Math.max(...before)).toBeLessThanOrEqual(6 + (MAX_DEFER_ROUNDS * 60_000) / 10_000);
  });
});

describe('a need timed by learned durations, on an account that gives the run more than its quiet pace', () => {
  const asked: number[] = [];
  const modelled: ReadNeed = {
    since: 0,
    minMs: 500,
    wishMs: 10_000,
    maxMs: 10_000,
    likelyAt: 25_000,
    atShare: (shareMs) => {
      asked.push(shareMs);
      return { waitMs: shareMs / 2, likelyAt: 3 * shareMs };
    },
  };

  it('is re-timed by the run\'s model for its share, never under the 2 s floor', () => {
    asked.length = 0;
    expect(retimedForShare(modelled, 6_000)).toMatchObject({ wishMs: 3_000, likelyAt: 18_000 });
    expect(retimedForShare(modelled, 500)).toMatchObject({ wishMs: FAIR_FLOOR_MS / 2, likelyAt: 3 * FAIR_FLOOR_MS });
    expect(asked).toEqual([6_000, FAIR_FLOOR_MS]);
  });

  it('keeps the run\'s own timing when the share is no shorter than its maximum gap, or there is no account', () => {
    asked.length = 0;
    expect(retimedForShare(modelled, 10_000)).toBe(modelled);
    expect(retimedForShare(modelled, 30_000)).toBe(modelled);
    expect(retimedForShare(modelled, undefined)).toBe(modelled);
    const flat: ReadNeed = { since: 0, minMs: 500, wishMs: 10_000, maxMs: 10_000 };
    expect(retimedForShare(flat, 6_000)).toBe(flat);
    expect(asked).toEqual([]);
  });
});

describe('reads timed by learned durations on a saturated account', () => {
  it('serves the run whose change has become likely as its model spaces its reads, though it read in the turns before', () => {
    // Six runs on a minute's budget of 60: each run's share is a read every 6 s or so, under its 10 s maximum gap.
    const sim = new Simulation({ requestsPerMinute: 60, burst: 1 });
    const waits: number[] = [];
    const asked = new Map<number, { readonly key: string; readonly dueAt: number }>();
    // The run whose change is coming reads every 2 s; the others' changes are minutes off, so they read
    // at their share and their reads are put back by the turns until their change is likely.
    const ask = (key: string): void => {
      const since = sim.now;
      const likely = key === 'we-likely';
      sim.core.need(key, {
        since,
        minMs: 500,
        wishMs: 10_000,
        maxMs: 10_000,
        likelyAt: since + 10_000,
        atShare: (shareMs) => (likely ? { waitMs: 2_000, likelyAt: since + 2_000 } : { waitMs: shareMs, likelyAt: since + 3 * shareMs }),
      });
      asked.set(sim.enqueue(ticket('status', key)), { key, dueAt: since + (likely ? 2_000 : 0) });
    };
    for (let run = 0; run < 5; run += 1) ask(`we-${String(run)}`);
    ask('we-likely');
    let seen = 0;
    while (sim.now < 3 * 60_000) {
      sim.advanceBy(100);
      for (const sent of sim.sent.slice(seen)) {
        const read = asked.get(sent.id)!;
        if (read.key === 'we-likely' && sent.at > 60_000) waits.push(sent.at - read.dueAt);
        sim.report(sent.ticket);
        ask(read.key);
      }
      seen = sim.sent.length;
    }
    // Past the first minute's burst, every read of the likely run goes within a send of its due time.
    expect(waits.length).toBeGreaterThan(20);
    expect(Math.max(...waits)).toBeLessThanOrEqual(1_100);
  });
});

describe('reads timed by learned durations, many runs changing at once', () => {
  it('keeps a read whose change is still unlikely in its run\'s turn: the reads finding changes go first', () => {
    // Ten runs on a minute's budget of 60 (a read every 10 s each, under the 20 s maximum gap): five
    // whose changes are coming read every 2 s; five whose changes are minutes off read at their share,
    // put back by the turns until their change is likely.
    const sim = new Simulation({ requestsPerMinute: 60, burst: 1 });
    const waits: number[] = [];
    const asked = new Map<number, { readonly key: string; readonly dueAt: number }>();
    const ask = (key: string): void => {
      const since = sim.now;
      const likely = key.startsWith('we-likely');
      sim.core.need(key, {
        since,
        minMs: 500,
        wishMs: 20_000,
        maxMs: 20_000,
        likelyAt: since + 20_000,
        atShare: (shareMs) => (likely ? { waitMs: 2_000, likelyAt: since + 2_000 } : { waitMs: shareMs, likelyAt: since + 3 * shareMs }),
      });
      asked.set(sim.enqueue(ticket('status', key)), { key, dueAt: since + (likely ? 2_000 : 0) });
    };
    for (let run = 0; run < 5; run += 1) ask(`we-far-${String(run)}`);
    for (let run = 0; run < 5; run += 1) ask(`we-likely-${String(run)}`);
    let seen = 0;
    while (sim.now < 4 * 60_000) {
      sim.advanceBy(100);
      for (const sent of sim.sent.slice(seen)) {
        const read = asked.get(sent.id)!;
        if (read.key.startsWith('we-likely') && sent.at > 60_000) waits.push(sent.at - read.dueAt);
        sim.report(sent.ticket);
        ask(read.key);
      }
      seen = sim.sent.length;
    }
    // Past the first minute, the median read of a run whose change is coming goes within 4 s of its due
    // time (3.4 s; 4.5 s when the far runs' put-back reads took the current turn too, 8.8 s when no read did).
    waits.sort((a, b) => a - b);
    expect(waits.length).toBeGreaterThan(50);
    expect(waits[Math.floor(waits.length / 2)]).toBeLessThanOrEqual(4_000);
  });
});
