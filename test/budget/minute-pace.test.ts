import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetLimits, DAY_MS, IDLE_PACER, MIN_PACE_SHARE, minutePace, pacerAfterSend, pacerReadyAt, sustainableRate } from '../../src/budget/account-rules.js';
import type { BudgetLimits } from '../../src/budget/account-rules.js';
import { RateLimiter } from '../../src/emulator/state/rate-limiter.js';

const SERVICE_MINUTE_MS = 60_000;

/** Small accounts often, every size up to 10,000 a minute, and a few far larger ones when `huge`. */
const settingsOf = (huge: boolean) =>
  fc.record({
    requestsPerMinute: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: huge ? 1_000_000 : 10_000 })),
    burst: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 2_000 })),
    safetyMargin: fc.constantFrom(0, 0.05, 0.2),
    latencyAllowanceMs: fc.constantFrom(0, 2_000, 5_000),
  });
const settings = settingsOf(true);

/**
 * The pacer alone, as a ledger drives it: each spell asks for `count` sends after an idle `gap`, each
 * sent at the earliest the pacer allows. Returns the send times, at most `most` of them.
 */
function pacedSends(limits: BudgetLimits, spells: readonly { readonly gap: number; readonly count: number }[], most: number): number[] {
  let tat = IDLE_PACER;
  let now = 0;
  const sends: number[] = [];
  for (const { gap, count } of spells) {
    now += gap;
    for (let index = 0; index < count && sends.length < most; index++) {
      now = Math.max(now, pacerReadyAt(tat, limits));
      tat = pacerAfterSend(tat, now, limits);
      sends.push(now);
    }
  }
  return sends;
}

/** The emulator's own count (fixed windows from the first request, service.md §2.1): the arrivals it refuses, and how many each full window held. */
function serviceCount(perMinute: number, arrivals: readonly number[]): { readonly refused: number; readonly perWindow: readonly number[] } {
  const limiter = new RateLimiter({ perMinute, perDay: Number.MAX_SAFE_INTEGER });
  const perWindow: number[] = [];
  let refused = 0;
  let windowStart: number | undefined;
  let held = 0;
  for (const at of [...arrivals].sort((a, b) => a - b)) {
    if (windowStart === undefined || at >= windowStart + SERVICE_MINUTE_MS) {
      if (windowStart !== undefined) perWindow.push(held);
      windowStart = at;
      held = 0;
    }
    held += 1;
    if (!limiter.take(at).allowed) refused += 1;
  }
  return { refused, perWindow };
}

describe('the minute\'s pace', () => {
  it('never sends more than the limit into a window of the service, whatever the limit, the burst, the idle spells and the travel times within the allowance', () => {
    fc.assert(
      fc.property(
        settings,
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 90_000 }), count: fc.integer({ min: 1, max: 3_000 }) }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 50 }),
        (options, spells, travel) => {
          const limits = budgetLimits(options);
          const sends = pacedSends(limits, spells, 4 * limits.usablePerMinute + 10);
          const arrivals = sends.map((at, index) => at + (travel[index % travel.length] ?? 0) * options.latencyAllowanceMs);
          expect(serviceCount(limits.perMinute, arrivals).refused).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('sends at least 85% of the limit in every window of the service while requests wait, or all the safety margin allows', () => {
    fc.assert(
      fc.property(settingsOf(false), (options) => {
        const limits = budgetLimits(options);
        // The most the margin allows: the usable count in every window of ours (service.md §2.1 and the latency allowance).
        const mostTheMarginAllows = SERVICE_MINUTE_MS / Math.ceil(limits.minuteWindowMs / limits.usablePerMinute);
        const least = Math.min(MIN_PACE_SHARE * limits.perMinute, mostTheMarginAllows);
        const sends = pacedSends(limits, [{ gap: 0, count: 4 * limits.usablePerMinute + 10 }], Number.POSITIVE_INFINITY);
        const { refused, perWindow } = serviceCount(limits.perMinute, sends);
        expect(refused).toBe(0);
        expect(perWindow.length).toBeGreaterThanOrEqual(3);
        for (const held of perWindow) expect(held).toBeGreaterThanOrEqual(Math.floor(least));
      }),
      { numRuns: 150 },
    );
  });

  it('reaches 85% of the limit from 7 a minute up with the default margin, allowance and burst, or all that whole-millisecond intervals within the margin allow', () => {
    for (let requestsPerMinute = 7; requestsPerMinute <= 10_000; requestsPerMinute++) {
      const limits = budgetLimits({ requestsPerMinute });
      const mostTheMarginAllows = SERVICE_MINUTE_MS / Math.ceil(limits.minuteWindowMs / limits.usablePerMinute);
      expect(SERVICE_MINUTE_MS / limits.pacingIntervalMs, `${requestsPerMinute} a minute`).toBeGreaterThanOrEqual(Math.min(MIN_PACE_SHARE * requestsPerMinute, mostTheMarginAllows));
      if (requestsPerMinute <= 1_000) expect(SERVICE_MINUTE_MS / limits.pacingIntervalMs, `${requestsPerMinute} a minute`).toBeGreaterThanOrEqual(MIN_PACE_SHARE * requestsPerMinute);
    }
    // 7 a minute with a burst of 5 paced 3 sends per 62 s; now one every 8,858 ms.
    expect(budgetLimits({ requestsPerMinute: 7 })).toMatchObject({ burst: 1, pacingIntervalMs: 8_858 });
    expect(budgetLimits({ requestsPerMinute: 20 })).toMatchObject({ burst: 2, pacingIntervalMs: 3_445 });
  });

  it('keeps the largest burst, up to the one asked for, that keeps that pace', () => {
    fc.assert(
      fc.property(settings, (options) => {
        const limits = budgetLimits(options);
        const asked = Math.min(options.burst, limits.usablePerMinute);
        expect(limits.burst).toBeLessThanOrEqual(asked);
        if (limits.burst < asked) {
          // One more would lengthen the interval past both 85% of the limit and the most the margin allows.
          const larger = Math.ceil(limits.minuteWindowMs / (limits.usablePerMinute - limits.burst));
          expect(SERVICE_MINUTE_MS / larger).toBeLessThan(MIN_PACE_SHARE * limits.perMinute);
          expect(larger).toBeGreaterThan(Math.ceil(limits.minuteWindowMs / limits.usablePerMinute));
        }
        expect(minutePace({ perMinute: limits.perMinute, usablePerMinute: limits.usablePerMinute, burst: options.burst, windowMs: limits.minuteWindowMs })).toEqual({
          burst: limits.burst,
          intervalMs: limits.pacingIntervalMs,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the defaults: a burst of 5, one send per 682 ms', () => {
    expect(budgetLimits()).toMatchObject({ burst: 5, pacingIntervalMs: 682 });
  });

  it('keeps the burst asked for where whole milliseconds hold the pace anyway: an account of a million a minute', () => {
    expect(budgetLimits({ requestsPerMinute: 1_000_000, burst: 20 })).toMatchObject({ burst: 20, pacingIntervalMs: 1 });
  });

  it('sustains at least 85% of the day\'s limit with the default reserve, however small the day', () => {
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 1_000_000 }), (requestsPerDay) => {
        const limits = budgetLimits({ requestsPerDay });
        const perMs = sustainableRate({ remaining: limits.usablePerDay, leftBy: () => 0, now: 0, windowMs: limits.dayWindowMs });
        expect(perMs * DAY_MS).toBeGreaterThanOrEqual(MIN_PACE_SHARE * requestsPerDay);
      }),
    );
  });
});
