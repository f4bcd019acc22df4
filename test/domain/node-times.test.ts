import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../../src/domain/model.js';
import { type NodeTimes, seeNodeEvent } from '../../src/domain/node-times.js';
import { nodeRank } from '../../src/runs/execution-view.js';

interface Sighting {
  readonly status: NodeStatus;
  readonly at: number;
}

const STATUSES: readonly NodeStatus[] = ['init', 'waiting', 'executing', 'finish', 'failed', 'unknown'];
const isDone = (status: NodeStatus): boolean => status === 'finish' || status === 'failed';

/** A node's times after a run saw these events of it, in order. */
function seen(sightings: readonly Sighting[]): NodeTimes | undefined {
  return sightings.reduce<NodeTimes | undefined>((times, sighting) => seeNodeEvent(times, sighting, sighting.at), undefined);
}

/** Statuses each seen after a gap (the reads' times only grow). */
const sightingsArb = (statuses: fc.Arbitrary<NodeStatus[]>): fc.Arbitrary<Sighting[]> =>
  statuses.chain((list) =>
    fc.array(fc.nat({ max: 10_000 }), { minLength: list.length, maxLength: list.length }).map((gaps) => {
      let at = 1_000;
      return list.map((status, index) => ({ status, at: (at += gaps[index]!) }));
    }),
  );

/** A node's events as a run gives them: one per move forward (service.md §3.2), steps skipped between reads. */
const forwardArb = sightingsArb(
  // `subarray` keeps the order of STATUSES, which is by rank; `finish` and `failed` rank alike: a node ends once.
  fc.subarray(STATUSES.filter((status) => status !== 'unknown')).map((statuses) => statuses.filter((status, index) => index === 0 || nodeRank(status) > nodeRank(statuses[index - 1]!))),
);

describe('seeNodeEvent: when a run saw a node start and end', () => {
  it('sees a node start when first seen executing and end when first seen done', () => {
    expect(seen([{ status: 'init', at: 1 }, { status: 'executing', at: 2 }, { status: 'finish', at: 5 }])).toEqual({ startedAt: 2, endedAt: 5 });
    expect(seen([{ status: 'executing', at: 3 }, { status: 'failed', at: 4 }])).toEqual({ startedAt: 3, endedAt: 4 });
  });

  it('sees the end of a node that went from init to done between two reads, without guessing its start', () => {
    expect(seen([{ status: 'init', at: 1 }, { status: 'finish', at: 7 }])).toEqual({ endedAt: 7 });
    expect(seen([{ status: 'failed', at: 9 }])).toEqual({ endedAt: 9 });
  });

  it('records each transition once: later events of a status already seen change nothing', () => {
    const times = seen([{ status: 'executing', at: 2 }, { status: 'finish', at: 5 }]);
    expect(seeNodeEvent(times, { status: 'failed' }, 8)).toBe(times);
    expect(seeNodeEvent(times, { status: 'executing' }, 8)).toBe(times);
    expect(seeNodeEvent(undefined, { status: 'init' }, 8)).toBeUndefined();
  });

  it('on a run’s events, the start is the first executing seen and the end the first done seen', () => {
    fc.assert(
      fc.property(forwardArb, (sightings) => {
        const start = sightings.find((sighting) => sighting.status === 'executing')?.at;
        const end = sightings.find((sighting) => isDone(sighting.status))?.at;
        expect(seen(sightings)).toEqual(start === undefined && end === undefined ? undefined : { ...(start === undefined ? {} : { startedAt: start }), ...(end === undefined ? {} : { endedAt: end }) });
      }),
    );
  });

  it('on any events, a start never follows the end, and each time is one an event of that kind was seen at', () => {
    fc.assert(
      fc.property(sightingsArb(fc.array(fc.constantFrom(...STATUSES), { maxLength: 8 })), (sightings) => {
        const times = seen(sightings);
        if (times?.startedAt !== undefined && times.endedAt !== undefined) expect(times.startedAt).toBeLessThanOrEqual(times.endedAt);
        if (times?.startedAt !== undefined) expect(sightings.some((sighting) => sighting.status === 'executing' && sighting.at === times.startedAt)).toBe(true);
        if (times?.endedAt !== undefined) expect(sightings.some((sighting) => isDone(sighting.status) && sighting.at === times.endedAt)).toBe(true);
      }),
    );
  });
});
