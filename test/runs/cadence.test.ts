import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cadenceBounds, DEFAULT_POLL_INTERVAL, nextCadence, type Pace, startCadence } from '../../src/runs/poll.js';

const half = () => 0.5;

describe('cadenceBounds', () => {
  it('defaults to 500 ms / 10 s', () => {
    expect(cadenceBounds()).toEqual(DEFAULT_POLL_INTERVAL);
    expect(DEFAULT_POLL_INTERVAL).toEqual({ minMs: 500, maxMs: 10_000 });
  });

  it('prefers the run option, then the client default', () => {
    expect(cadenceBounds({ minMs: 200 }, { minMs: 300, maxMs: 5000 })).toEqual({ minMs: 200, maxMs: 5000 });
  });

  it('lets 0 be set (?? not ||) and raises a default max below the min; refuses a min above the max given with it', () => {
    expect(cadenceBounds({ minMs: 0, maxMs: 0 })).toEqual({ minMs: 0, maxMs: 0 });
    expect(cadenceBounds({ minMs: 20_000 })).toEqual({ minMs: 20_000, maxMs: 20_000 });
    expect(cadenceBounds({ minMs: 3000 }, { maxMs: 1000 })).toEqual({ minMs: 3000, maxMs: 3000 });
    expect(() => cadenceBounds({ minMs: 2000, maxMs: 1000 })).toThrow(expect.objectContaining({ argument: 'pollInterval' }));
  });
});

describe('nextCadence', () => {
  it('backs off ×1.5 while quiet, up to the max, and snaps back after a change', () => {
    const bounds = { minMs: 500, maxMs: 2000 };
    let state = startCadence(bounds);
    const waits: number[] = [];
    for (const reading of ['quiet', 'quiet', 'quiet', 'quiet', 'quiet', 'changed', 'quiet'] as const) {
      const next = nextCadence(bounds, state, reading, half);
      waits.push(next.waitMs);
      state = next.state;
    }
    expect(waits).toEqual([750, 1125, 1688, 2000, 2000, 500, 750]);
  });

  it('polls at the fastest rate while settling (service.md §3.3)', () => {
    const bounds = { minMs: 500, maxMs: 10_000 };
    expect(nextCadence(bounds, { delayMs: 8000 }, 'settling', half).waitMs).toBe(500);
  });

  it('spreads the wait by ±20% with the injected random source', () => {
    const bounds = { minMs: 100, maxMs: 10_000 };
    expect(nextCadence(bounds, { delayMs: 1000 }, 'quiet', () => 0).waitMs).toBe(1200);
    expect(nextCadence(bounds, { delayMs: 1000 }, 'quiet', () => 0.999_999).waitMs).toBe(1800);
  });

  const boundsArb = fc
    .tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 60_000 }))
    .map(([minMs, extra]) => ({ minMs, maxMs: minMs + extra }));
  const readingArb = fc.constantFrom<Pace>('changed', 'settling', 'quiet');
  const randomArb = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it('always waits within the bounds', () => {
    fc.assert(
      fc.property(boundsArb, fc.array(fc.tuple(readingArb, randomArb), { maxLength: 60 }), (bounds, steps) => {
        let state = startCadence(bounds);
        for (const [reading, random] of steps) {
          const next = nextCadence(bounds, state, reading, () => random);
          expect(next.waitMs).toBeGreaterThanOrEqual(bounds.minMs);
          expect(next.waitMs).toBeLessThanOrEqual(bounds.maxMs);
          state = next.state;
        }
      }),
    );
  });

  it('resets to the fastest delay on a change and never speeds up while quiet', () => {
    fc.assert(
      fc.property(boundsArb, fc.array(fc.tuple(readingArb, randomArb), { maxLength: 60 }), (bounds, steps) => {
        let state = startCadence(bounds);
        for (const [reading, random] of steps) {
          const next = nextCadence(bounds, state, reading, () => random);
          if (reading === 'quiet') expect(next.state.delayMs).toBeGreaterThanOrEqual(state.delayMs);
          else expect(next.state.delayMs).toBe(bounds.minMs);
          state = next.state;
        }
      }),
    );
  });
});
