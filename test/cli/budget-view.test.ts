import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AccountConfig, type AccountRecord, newAccountRecord } from '../../src/budget/account-rules.js';
import { budgetFrame } from '../../src/cli/budget/budget-frame.js';
import { viewOfRecord } from '../../src/cli/budget/budget-view.js';
import { type FollowedStatus, type RunsByState, runsByState } from '../../src/cli/budget/runs-by-state.js';
import { displayWidth } from '../../src/cli/format/display-width.js';
import { createPaint } from '../../src/cli/format/paint.js';
import { requested, SharedProcess } from '../../src/budget/process-rules.js';

const LEASE_MS = 124_000;
const START = Date.UTC(2026, 10, 27, 5, 0, 0);

function configOf(id: string): AccountConfig {
  return { options: {}, process: new SharedProcess(id, LEASE_MS) };
}

/** Each step: a process asks for a read at `afterMs` past the previous step, with `demand` runs waiting. */
const steps = fc.array(fc.record({ process: fc.integer({ min: 0, max: 3 }), afterMs: fc.integer({ min: 0, max: 90_000 }), demand: fc.integer({ min: 0, max: 5 }) }), { minLength: 1, maxLength: 60 });

function replay(list: readonly { process: number; afterMs: number; demand: number }[]): { record: AccountRecord; now: number; last: Map<string, { at: number; demand: number }> } {
  let record = newAccountRecord('e-1');
  let now = START;
  const last = new Map<string, { at: number; demand: number }>();
  for (const step of list) {
    now += step.afterMs;
    const id = `p-${step.process}`;
    record = requested(record, { klass: 'reads', demand: step.demand }, now, configOf(id)).record;
    last.set(id, { at: now, demand: step.demand });
  }
  return { record, now, last };
}

const STATUSES: readonly FollowedStatus[] = ['init', 'executing', 'finish', 'failed', 'unknown', 'unread'];

const byStates: fc.Arbitrary<RunsByState | null> = fc.option(
  fc.record({ counts: fc.record(Object.fromEntries(STATUSES.map((status) => [status, fc.nat({ max: 1_000_000 })])) as Record<FollowedStatus, fc.Arbitrary<number>>), atLeast: fc.boolean() }),
);

/** A hub's stored state: a `RunState`'s JSON at a status (or none yet), or what no hub writes. */
const storedStates = fc.oneof(
  fc.constantFrom('init', 'executing', 'finish', 'failed', 'unknown').map((status) => ({ state: JSON.stringify({ status, nodes: [], files: [], elapsedMs: 0 }), status })),
  fc.constant({ state: JSON.stringify({ nodes: [], files: [], elapsedMs: 0 }), status: 'unread' as const }),
  fc.constantFrom(undefined, '').map((state) => ({ state, status: 'unread' as const })),
  fc.constantFrom('{"status":"aborted"}', '{"status":3}', 'null', '[', '"executing"').map((state) => ({ state, status: 'unknown' as const })),
);

describe('the runs a fleet\'s hubs follow, by state', () => {
  it('counts every stored state once, at its status (unreadable ones as unknown), and says "at least" when the read was cut short', () => {
    fc.assert(
      fc.property(fc.array(storedStates, { maxLength: 40 }), fc.boolean(), (stored, complete) => {
        const counted = runsByState(stored.map(({ state }) => state), complete);
        if (stored.length === 0 && complete) {
          expect(counted).toBeNull();
          return;
        }
        expect(counted?.atLeast).toBe(!complete);
        for (const status of STATUSES) expect(counted?.counts[status]).toBe(stored.filter((entry) => entry.status === status).length);
      }),
    );
  });

  it('draws the counts by state, "at least" when cut short, and says when no hub follows any run', () => {
    const { record, now } = replay([{ process: 0, afterMs: 0, demand: 1 }]);
    const lines = (byState: RunsByState | null): string[] => budgetFrame(viewOfRecord(record, now, 'acme', byState), createPaint(false), 120).split('\n');
    expect(lines(runsByState(['{"status":"executing"}', '{"status":"executing"}', '{"status":"finish"}', '{"status":"failed"}', undefined], true))).toContain('runs by state: 2 executing · 1 finished · 1 failed · 1 not read yet');
    expect(lines(runsByState(['{"status":"executing"}'], false))).toContain('runs by state: at least 1 executing');
    expect(lines(null)).toContain('runs by state: none followed through a Redis run hub');
  });
});

describe('the view of a fleet\'s record', () => {
  it('lists exactly the processes whose lease runs, with the runs each has polling, and meters that add up', () => {
    fc.assert(
      fc.property(steps, fc.integer({ min: 0, max: 200_000 }), (list, laterMs) => {
        const { record, now, last } = replay(list);
        const at = now + laterMs;
        const view = viewOfRecord(JSON.parse(JSON.stringify(record)) as AccountRecord, at, 'acme', null);
        const live = [...last].filter(([, entry]) => entry.at + LEASE_MS > at).sort(([a], [b]) => a.localeCompare(b));
        expect(view.processes?.map((entry) => [entry.id, entry.runsPolling])).toEqual(live.map(([id, entry]) => [id, entry.demand]));
        expect(view.runs?.polling).toBe(live.reduce((sum, [, entry]) => sum + entry.demand, 0));
        expect(view.waiting.reads).toBe(view.runs?.polling);
        expect(view.minute.used + view.minute.remaining).toBe(view.minute.limit);
        expect(view.day.used).toBeGreaterThanOrEqual(view.minute.used);
        expect(view.day.used).toBeLessThanOrEqual(list.length);
      }),
    );
  });

  it('counts every grant of the last minute', () => {
    const { record, now } = replay([{ process: 0, afterMs: 0, demand: 2 }, { process: 1, afterMs: 1_000, demand: 1 }, { process: 0, afterMs: 1_000, demand: 0 }]);
    expect(viewOfRecord(record, now + 1_000, 'acme', null)).toMatchObject({ recorded: true, minute: { limit: 100, used: 3, remaining: 97 }, day: { limit: 10_000, used: 3 } });
  });

  it('draws frames whose lines never exceed the terminal\'s width, coloured or not', () => {
    fc.assert(
      fc.property(steps, byStates, fc.integer({ min: 1, max: 160 }), fc.boolean(), (list, byState, columns, colors) => {
        const { record, now } = replay(list);
        const frame = budgetFrame(viewOfRecord(record, now, 'acme-prod', byState), createPaint(colors), columns);
        // eslint-disable-next-line no-control-regex -- the colours' SGR sequences take no column
        for (const line of frame.split('\n')) expect(displayWidth(line.replace(/\u001B\[\d+m/gu, ''))).toBeLessThanOrEqual(Math.max(10, columns - 1));
      }),
      { numRuns: 50 },
    );
  });
});
