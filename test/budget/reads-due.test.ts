import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/budget/fair-queue.js';
import type { GateTicket } from '../../src/domain/requests.js';

const read = (key: string, dueAt?: number): GateTicket => ({ endpoint: 'status', priority: 'status', key, ...(dueAt === undefined ? {} : { dueAt }) });

/** Serves the reads class to the end, in its order. */
function drain(queue: FairQueue): string[] {
  const served: string[] = [];
  for (let entry = queue.of('reads').next(); entry !== undefined; entry = queue.of('reads').next()) {
    queue.remove(entry.id);
    queue.served(entry);
    served.push(entry.ticket.key ?? '');
  }
  return served;
}

describe('the order of a run\'s reads', () => {
  it('serves the read due earliest first: the run most likely to have changed', () => {
    const queue = new FairQueue();
    [read('a', 9_000), read('b', 3_000), read('c'), read('d', 1_000)].forEach((ticket, id) => {
      queue.offer(queue.enqueue(id, ticket, 5_000));
    });
    // c, untimed, is due when it arrived (5 000): after b and d, before a.
    expect(drain(queue)).toEqual(['d', 'b', 'c', 'a']);
  });

  it('keeps the round-robin when no read is timed: without a model nothing changes', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 5 })), { maxLength: 30 }), (arrivals) => {
        const timed = new FairQueue();
        const plain = new FairQueue();
        let now = 0;
        arrivals.forEach(([key, gap], id) => {
          now += gap;
          timed.offer(timed.enqueue(id, read(key), now));
          plain.offer(plain.enqueue(id, { endpoint: 'status', priority: 'status', key }, now));
        });
        expect(drain(timed)).toEqual(drain(plain));
      }),
    );
  });

  it('a read due late still goes once those due before it have: no read waits past its due time for later ones', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 40 }), (dues) => {
        const queue = new FairQueue();
        dues.forEach((dueAt, id) => {
          queue.offer(queue.enqueue(id, read(`run-${String(id)}`, dueAt), 0));
        });
        const served = drain(queue).map((key) => dues[Number(key.slice(4))] ?? -1);
        expect(served).toEqual([...dues].sort((x, y) => x - y));
      }),
    );
  });
});
