import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/emulator/engine/seeded-random.js';
import { DEFAULT_FAULT_SHAPE, effectEndMs, faultSchedule, faultTracks, isServiceFault, JOINT_OUTAGE_MAX_MS, JOINT_QUIET_MS, type FaultScheduleOptions } from './fault-schedule.js';
import { runPlan } from './run-plan.js';

const shapes = fc
  .record({
    seed: fc.integer(),
    // Up to 6 hours of outages at least a second apart: at most some thousands of windows per case.
    horizonMs: fc.integer({ min: 0, max: 6 * 3_600_000 }),
    minOutage: fc.integer({ min: 0, max: 600_000 }),
    outageSpan: fc.integer({ min: 0, max: 600_000 }),
    minGap: fc.integer({ min: 1_000, max: 600_000 }),
    gapSpan: fc.integer({ min: 0, max: 600_000 }),
  })
  .map(({ seed, horizonMs, minOutage, outageSpan, minGap, gapSpan }) => ({
    seed,
    options: { horizonMs, outageMs: [minOutage, minOutage + outageSpan], gapMs: [minGap, minGap + gapSpan], latencyMs: [1_000, 8_000] } satisfies FaultScheduleOptions,
  }));

describe("the fault soak's outages", () => {
  it('replay from their seed', () => {
    fc.assert(
      fc.property(shapes, ({ seed, options }) => {
        expect(faultSchedule(mulberry32(seed), options)).toEqual(faultSchedule(mulberry32(seed), options));
      }),
    );
  });

  it('end by the horizon, last as long as the shape says, and never overlap on one track', () => {
    fc.assert(
      fc.property(shapes, ({ seed, options }) => {
        const windows = faultTracks(mulberry32(seed), options);
        for (const window of windows) {
          expect(window.startMs).toBeGreaterThanOrEqual(options.gapMs[0]);
          expect(window.startMs + window.durationMs).toBeLessThanOrEqual(options.horizonMs);
          expect(window.durationMs).toBeGreaterThanOrEqual(options.outageMs[0]);
          expect(window.durationMs).toBeLessThanOrEqual(options.outageMs[1]);
          expect(window.latencyMs !== undefined).toBe(window.kind === 'service-latency');
        }
        for (const service of [true, false]) {
          const track = windows.filter((window) => isServiceFault(window.kind) === service);
          for (let index = 1; index < track.length; index += 1) {
            expect(track[index]!.startMs).toBeGreaterThanOrEqual(track[index - 1]!.startMs + track[index - 1]!.durationMs + options.gapMs[0]);
          }
        }
      }),
    );
  });

  it('never chain the two tracks into a stretch longer than a run is meant to follow through, and keep only windows the tracks drew', () => {
    fc.assert(
      fc.property(shapes, ({ seed, options }) => {
        const drawn = faultTracks(mulberry32(seed), options);
        const windows = faultSchedule(mulberry32(seed), options);
        const drawnKeys = new Set(drawn.map((window) => JSON.stringify(window)));
        expect(windows.filter((window) => !drawnKeys.has(JSON.stringify(window)))).toEqual([]);
        let start = Number.NEGATIVE_INFINITY;
        let end = Number.NEGATIVE_INFINITY;
        let longest = 0;
        for (const window of windows) {
          if (window.startMs >= end + JOINT_QUIET_MS) start = window.startMs;
          end = Math.max(end, effectEndMs(window));
          longest = Math.max(longest, end - start);
        }
        expect(longest).toBeLessThanOrEqual(JOINT_OUTAGE_MAX_MS);
        expect(JOINT_OUTAGE_MAX_MS).toBeLessThan(10 * 60_000);
      }),
    );
  });

  it('bring every kind of a track once before any comes again', () => {
    fc.assert(
      fc.property(shapes, ({ seed, options }) => {
        const windows = faultTracks(mulberry32(seed), options);
        for (const [service, kinds] of [[true, 3], [false, 2]] as const) {
          const track = windows.filter((window) => isServiceFault(window.kind) === service).map((window) => window.kind);
          for (let start = 0; start + kinds <= track.length; start += kinds) expect(new Set(track.slice(start, start + kinds)).size).toBe(kinds);
        }
      }),
    );
  });

  it('stay shorter than the 10 minutes a run follows an outage through, by default', () => {
    expect(DEFAULT_FAULT_SHAPE.outageMs[1]).toBeLessThan(10 * 60_000);
    // And longer than a request's own retries (about 3.5 s) and the Redis budget's patience (30 s) can hide.
    expect(DEFAULT_FAULT_SHAPE.outageMs[1]).toBeGreaterThan(30_000);
  });

  it('refuse a shape with no gap, which would never end', () => {
    expect(() => faultSchedule(mulberry32(1), { ...DEFAULT_FAULT_SHAPE, gapMs: [0, 10], horizonMs: 60_000 })).toThrow(RangeError);
  });
});

describe("the fault soak's runs", () => {
  const plans = fc.record({
    seed: fc.integer(),
    runs: fc.integer({ min: 0, max: 300 }),
    arrivalMs: fc.integer({ min: 0, max: 3_600_000 }),
    leaveShare: fc.double({ min: 0, max: 1, noNaN: true }),
    leaveAtOnceShare: fc.double({ min: 0, max: 1, noNaN: true }),
    leaveWithinMs: fc.integer({ min: 0, max: 600_000 }),
  });

  it('replay from their seed, in order of start, each with a key of its own', () => {
    fc.assert(
      fc.property(plans, ({ seed, ...options }) => {
        const plan = runPlan(mulberry32(seed), { ...options, prefix: 'p' });
        expect(runPlan(mulberry32(seed), { ...options, prefix: 'p' })).toEqual(plan);
        expect(plan).toHaveLength(options.runs);
        expect(new Set(plan.map((run) => run.key)).size).toBe(options.runs);
        for (const [index, run] of plan.entries()) {
          expect(run.index).toBe(index);
          expect(run.startAtMs).toBeGreaterThanOrEqual(index === 0 ? 0 : plan[index - 1]!.startAtMs);
          expect(run.startAtMs).toBeLessThanOrEqual(options.arrivalMs);
          if (run.leaveAfterMs !== undefined) expect(run.leaveAfterMs).toBeLessThanOrEqual(options.leaveWithinMs);
        }
      }),
    );
  });

  it('leave in about the share asked, some of them at once', () => {
    const plan = runPlan(mulberry32(3), { runs: 1_000, arrivalMs: 60_000, leaveShare: 0.3, leaveAtOnceShare: 0.1, leaveWithinMs: 60_000, prefix: 'p' });
    const leaving = plan.filter((run) => run.leaveAfterMs !== undefined);
    expect(leaving.length).toBeGreaterThan(250);
    expect(leaving.length).toBeLessThan(350);
    expect(leaving.filter((run) => run.leaveAfterMs === 0).length).toBeGreaterThan(10);
  });
});
