import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/relay/event-log.js';
import type { RunEvent } from '../../src/runs/events.js';

const status = (index: number): RunEvent => ({ type: 'status', executionId: 'we-1', status: index % 2 === 0 ? 'executing' : 'finish' });

describe('EventLog', () => {
  it('numbers events 1, 2, 3… and gives after(n) exactly the events numbered above n, in order (property)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 60 }), fc.integer({ min: -2, max: 70 }), (count, seq) => {
        const log = new EventLog();
        const appended = Array.from({ length: count }, (_, index) => log.append(status(index)));
        expect(appended.map((entry) => entry.seq)).toEqual(appended.map((_, index) => index + 1));
        expect(log.after(seq)).toEqual(appended.filter((entry) => entry.seq > seq));
        expect(log.lastSeq).toBe(count);
        expect(log.last).toBe(appended.at(-1));
      }),
    );
  });
});
