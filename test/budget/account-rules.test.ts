import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetLimits, newAccountRecord, nextMarkExpiryAt, pruned, readsPerMinute, readyAt } from '../../src/budget/account-rules.js';
import type { AccountConfig, AccountRecord } from '../../src/budget/account-rules.js';
import { FAIR_CLASSES } from '../../src/budget/fair-queue.js';
import type { FairClass } from '../../src/budget/fair-queue.js';
import { requested, SharedProcess } from '../../src/budget/process-rules.js';

interface Send {
  readonly at: number;
  readonly klass: FairClass;
}

/** Asks the rules for each request at its time (after `gap`), as a ledger would; returns the sends granted and the record. */
function play(config: AccountConfig, requests: readonly { readonly klass: FairClass; readonly gap: number }[]): { sends: Send[]; record: AccountRecord } {
  let record = newAccountRecord('e');
  let now = 0;
  const sends: Send[] = [];
  requests.forEach(({ klass, gap }, index) => {
    now += gap;
    const next = requested(record, { klass, startKey: klass === 'start' ? `c-${index} {}` : undefined, demand: 1 }, now, config);
    record = next.record;
    if (next.verdict.verdict === 'granted') sends.push({ at: now, klass });
  });
  return { sends, record };
}

/** The most sends that any window of `windowMs` (wherever it starts) holds. */
function mostInAnyWindow(times: readonly number[], windowMs: number): number {
  let most = 0;
  let from = 0;
  for (let to = 0; to < times.length; to++) {
    while ((times[from] ?? 0) + windowMs <= (times[to] ?? 0)) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

const klass = fc.constantFrom<FairClass>(...FAIR_CLASSES);

describe('the account\'s rule book', () => {
  it('never lets more than the usable count into any window of a minute, nor more than the limit with aborts', () => {
    fc.assert(
      fc.property(
        fc.record({ requestsPerMinute: fc.integer({ min: 5, max: 200 }), burst: fc.integer({ min: 1, max: 20 }) }),
        fc.array(fc.record({ klass, gap: fc.integer({ min: 0, max: 3_000 }) }), { minLength: 1, maxLength: 400 }),
        (options, requests) => {
          const limits = budgetLimits(options);
          const { sends } = play({ options }, requests);
          const paced = sends.filter((send) => send.klass !== 'abort').map((send) => send.at);
          expect(mostInAnyWindow(paced, limits.minuteWindowMs)).toBeLessThanOrEqual(limits.usablePerMinute);
          expect(mostInAnyWindow(sends.map((send) => send.at), limits.minuteWindowMs)).toBeLessThanOrEqual(limits.perMinute);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps the day\'s reserve: polls stop at the usable day, starts at their half of the reserve, everything at the limit', () => {
    fc.assert(
      fc.property(
        fc.record({ requestsPerDay: fc.integer({ min: 4, max: 120 }), dayReserve: fc.constantFrom(0, 0.1, 0.3), dayBurst: fc.constantFrom(0.1, 0.5, 0.9) }),
        fc.array(fc.record({ klass, gap: fc.integer({ min: 0, max: 3_600_000 }) }), { minLength: 1, maxLength: 300 }),
        (options, requests) => {
          const limits = budgetLimits(options);
          const { sends } = play({ options }, requests);
          const times = (keep: (send: Send) => boolean): number[] => sends.filter(keep).map((send) => send.at);
          expect(mostInAnyWindow(times((send) => send.klass === 'reads' || send.klass === 'interactive'), limits.dayWindowMs)).toBeLessThanOrEqual(limits.usablePerDay);
          expect(mostInAnyWindow(times((send) => send.klass !== 'abort'), limits.dayWindowMs)).toBeLessThanOrEqual(limits.startsPerDay);
          expect(mostInAnyWindow(times(() => true), limits.dayWindowMs)).toBeLessThanOrEqual(limits.perDay);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('answers the same from its record written out as JSON and read back', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ klass, gap: fc.integer({ min: 0, max: 30_000 }) }), { maxLength: 200 }), fc.integer({ min: 0, max: 120_000 }), (requests, later) => {
        const { record } = play({ options: {} }, requests);
        const copy = JSON.parse(JSON.stringify(record)) as AccountRecord;
        expect(copy).toEqual(record);
        const at = record.at + later;
        for (const each of FAIR_CLASSES) expect(readyAt(copy, each, at, { options: {} })).toBe(readyAt(record, each, at, { options: {} }));
      }),
      { numRuns: 50 },
    );
  });

  it('stays small with 10,000 requests a day: the day kept by minute, not by request', () => {
    const requests = Array.from({ length: 10_000 }, () => ({ klass: 'reads' as const, gap: 8_640 }));
    const { sends, record } = play({ options: { requestsPerDay: 20_000 } }, requests);
    expect(sends.length).toBeGreaterThan(9_000);
    // 1,442 minutes of counts at most, two minutes of send times, the caps and marks: a few kilobytes.
    expect(JSON.stringify(record).length).toBeLessThan(12_000);
  });

  it('gives each process of a fleet the same part of a tight day\'s pace as of the minute\'s: every run of the fleet read alike', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 2, maxLength: 6 }), fc.constantFrom(1_000, 10_000, 1_000_000), (demands, requestsPerDay) => {
        const configs = demands.map((_, index): AccountConfig => ({ options: { requestsPerDay }, process: new SharedProcess(`p${index}`, 124_000) }));
        let record = newAccountRecord('e');
        demands.forEach((demand, index) => {
          record = requested(record, { klass: 'reads', demand }, 0, configs[index]!).record;
        });
        const perRun = demands.map((demand, index) => readsPerMinute(record, 1, configs[index]!) / demand);
        for (const pace of perRun) expect(pace).toBeCloseTo(perRun[0]!, 9);
        // Together what the account gives a process alone: the minute's usable count, or the day's pace.
        const account = readsPerMinute(record, 1, { options: { requestsPerDay } });
        const total = perRun.reduce((sum, pace, index) => sum + pace * demands[index]!, 0);
        expect(total).toBeCloseTo(account, 9);
      }),
    );
  });

  it('lets no other process read from a process\'s first start to its last while they wait for the account\'s pace, and holds its starts back no longer than the pace', () => {
    fc.assert(
      fc.property(
        fc.record({
          starts: fc.integer({ min: 1, max: 30 }),
          startsFrom: fc.integer({ min: 0, max: 30_000 }),
          readers: fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 3 }),
          // How late each process asks after its turn: a starting process within one pacing interval
          // (its claim's lease is the pacer's burst, five), readers within three.
          lateness: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 50, maxLength: 50 }),
        }),
        ({ starts, startsFrom, readers, lateness }) => {
          const T = budgetLimits().pacingIntervalMs;
          const late = (index: number, most: number): number => (lateness[index % lateness.length] ?? 0) * most;
          const configOf = (id: string): AccountConfig => ({ options: {}, process: new SharedProcess(id, 124_000) });
          // Each process's next ask: the starter's next start, each reader's next read.
          const next = new Map<string, number>([['s', startsFrom], ...readers.map((_, index) => [`r${index}`, 0] as const)]);
          let record = newAccountRecord('e');
          let left = starts;
          let startsAskedAt: number | undefined;
          let lastStartAt = startsFrom;
          const readsWhileStartWaited: number[] = [];
          for (let step = 0; left > 0 && step < 10_000; step++) {
            const [id, now] = [...next].reduce((first, entry) => (entry[1] < first[1] ? entry : first));
            const isStarter = id === 's';
            const klass = isStarter ? 'start' : 'reads';
            const demand = isStarter ? left : readers[Number(id.slice(1))]!;
            const asked = requested(record, { klass, startKey: isStarter ? `c-${left} {}` : undefined, demand }, now, configOf(id));
            record = asked.record;
            if (isStarter) startsAskedAt ??= now;
            if (asked.verdict.verdict === 'granted') {
              if (isStarter) {
                left -= 1;
                lastStartAt = now;
              } else if (startsAskedAt !== undefined && now > startsAskedAt) readsWhileStartWaited.push(now);
              next.set(id, now + late(step, isStarter ? T / 4 : T));
            } else {
              next.set(id, Math.min(asked.verdict.at, now + 5_000) + late(step, isStarter ? T : 3 * T));
            }
          }
          expect(left).toBe(0);
          expect(readsWhileStartWaited).toEqual([]);
          // The starts take the pace's slots one after the other: no slower than the pace and each ask's lateness.
          expect(lastStartAt).toBeLessThanOrEqual(startsFrom + (starts + 1) * 2 * T);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('wakes for an identical start on its way in a shared account when its lease runs out, as pruning then forgets it: its answer may never come to this process', () => {
    const shared: AccountConfig = { options: {}, process: new SharedProcess('a', 124_000) };
    const { record } = requested(newAccountRecord('e'), { klass: 'start', startKey: 'c-1 {}', demand: 0 }, 1_000, shared);
    expect(nextMarkExpiryAt(record, shared)).toBe(125_000);
    expect(pruned(record, 125_000, shared).freed).toEqual(['c-1 {}']);
    // Alone in memory, the answer always comes: no wake before it.
    expect(nextMarkExpiryAt(requested(newAccountRecord('e'), { klass: 'start', startKey: 'c-1 {}', demand: 0 }, 1_000, { options: {} }).record, { options: {} })).toBeUndefined();
  });
});
