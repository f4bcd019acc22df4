import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { busiestWindow, fleetFigures, type LoggedRequest, longestQuiet, meanStatusInterval, missedAims, readsWhileStarting, spreadOf } from './fleet-figures.js';

const status = (executionId: string, emulatorTime: number, code = 200): LoggedRequest => ({ endpoint: 'status', status: code, emulatorTime, executionId });
const other = (endpoint: string, executionId: string | undefined, emulatorTime: number, code = 200): LoggedRequest => ({ endpoint, status: code, emulatorTime, executionId });

describe('the figures of a fleet, from the request log', () => {
  it('finds the longest time without a request inside the span, its edges counted, the times outside it not', () => {
    expect(longestQuiet([5_000, 1_000, 2_000, 70_000, 80_000, 200_000], { from: 0, to: 90_000 })).toEqual({ from: 5_000, ms: 65_000 });
    expect(longestQuiet([1_000, 2_000], { from: 0, to: 60_000 })).toEqual({ from: 2_000, ms: 58_000 });
    expect(longestQuiet([], { from: 10_000, to: 20_000 })).toEqual({ from: 10_000, ms: 10_000 });
  });

  it('averages the gaps between one run\'s status reads inside the span, ignoring its other requests and other runs', () => {
    const log = [status('a', 0), status('a', 1_000), other('output', 'a', 1_500), status('b', 1_600), status('a', 4_000), status('a', 9_000)];
    expect(meanStatusInterval(log, 'a', { from: 0, to: 9_000 })).toBe(2_000);
    expect(meanStatusInterval(log, 'a', { from: 500, to: 10_000 })).toBe(4_000);
    // Fewer reads than asked for: no interval to speak of.
    expect(meanStatusInterval(log, 'b', { from: 0, to: 10_000 })).toBeUndefined();
  });

  it('counts the reads of one process sent while another was starting its runs, not its own nor those outside every start phase', () => {
    // Process 0 starts a and b (0 s to 4 s); process 1 starts c at 5 s; process 2 (late) d and e from 10 s to 12 s.
    const log = [other('run', 'a', 0), other('run', 'b', 4_000), other('run', 'c', 5_000), other('run', 'd', 10_000), other('run', 'e', 12_000)];
    const reads = [status('a', 2_000), status('c', 6_000), status('a', 8_000), other('output', 'c', 11_000), status('a', 11_500), status('d', 11_000)];
    expect(readsWhileStarting([...log, ...reads], [['a', 'b'], ['c'], ['d', 'e']])).toBe(2);
  });

  it('gives the spread of processes and of runs, the account\'s use over the span, and every 429', () => {
    // Process 0: runs a (every 1 s) and b (every 2 s); process 1: run c (every 3 s); an abort and a 429 besides.
    const log = [
      ...[0, 1, 2, 3, 4, 5, 6].map((s) => status('a', s * 1_000)),
      ...[0, 2, 4, 6].map((s) => status('b', s * 1_000 + 100)),
      ...[0, 3, 6].map((s) => status('c', s * 1_000 + 200)),
      other('abort', 'x', 500),
      other('run', undefined, 8_000, 429),
    ];
    const figures = fleetFigures(log, [['a', 'b'], ['c']], { from: 0, to: 7_000 }, 120);

    expect(figures.runIntervalsMs).toEqual([[1_000, 2_000], [3_000]]);
    expect(figures.processMeansMs).toEqual([1_500, 3_000]);
    expect(figures.processSpread).toBe(2);
    expect(figures.runSpread).toBe(3);
    // 7 + 4 + 3 reads and the abort in 7 s, of the 14 that 120 a minute allow; the 429 came after.
    expect(figures.utilisation).toBeCloseTo(15 / 14);
    expect(figures.rateLimited).toBe(1);
    expect(figures.requests).toBe(log.length);
  });

  it('names each aim a fleet missed: a 429, the account used under 85%, a spread over ×1.3 or none measured', () => {
    const met = { runIntervalsMs: [[2_000], [2_400]], processMeansMs: [2_000, 2_400], processSpread: 1.2, runSpread: 1.2, utilisation: 0.88, rateLimited: 0, requests: 100 };
    expect(missedAims(met)).toEqual([]);
    expect(missedAims({ ...met, rateLimited: 2, utilisation: 0.81, runSpread: 1.42 })).toEqual(['2 × 429', 'utilisation 81%', 'runs ×1.42']);
    expect(missedAims({ ...met, processSpread: null })).toEqual(['processes ×—']);
    expect(missedAims(met, { utilisation: 0.9, spread: 1.1 })).toEqual(['utilisation 88%', 'processes ×1.20', 'runs ×1.20']);
  });

  it('has no spread where nothing was measured', () => {
    expect(spreadOf([])).toBeNull();
    const figures = fleetFigures([], [[], ['a']], { from: 0, to: 0 }, 100);
    expect(figures).toMatchObject({ processMeansMs: [null, null], processSpread: null, runSpread: null, utilisation: 0 });
  });

  it('finds the busiest minute: no window of 60 s holds more requests, and one holds that many', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 300_000 }), { maxLength: 60 }), (times) => {
        const most = busiestWindow(times);
        const inWindow = (from: number): number => times.filter((time) => time >= from && time < from + 60_000).length;
        // A busiest window can always be taken to begin at one of the requests.
        expect(Math.max(0, ...times.map(inWindow))).toBe(most);
      }),
    );
  });
});
