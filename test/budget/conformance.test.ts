import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { afterReport, budgetLimits } from '../../src/budget/account-rules.js';
import type { AccountConfig, AccountRecord, Verdict } from '../../src/budget/account-rules.js';
import { accountState } from '../../src/budget/account-budget.js';
import type { FairClass } from '../../src/budget/fair-queue.js';
import { createMemoryLedger } from '../../src/budget/ledger.js';
import type { AccountChange } from '../../src/budget/ledger.js';
import type { BudgetState } from '../../src/domain/budget.js';
import type { RequestBudgetOptions } from '../../src/domain/options.js';
import type { RateLimitInfo } from '../../src/domain/requests.js';
import { RedisLedger } from '../../src/redis/account-store.js';
import { startRedisServer, type RedisServer } from '../redis/redis-server.js';
import { left, requested, SharedProcess } from '../../src/budget/process-rules.js';

/**
 * The account's rules as a table: each row a rule, a sequence of requests, answers and time steps,
 * and what the account must say to each — run against the ledger in memory and the ledger in Redis
 * (a real redis-server), both in virtual time: the clock moves only when a row says so.
 */

type Expect = 'granted' | 'wait' | 'refused' | { readonly wait: number } | { readonly refused: number };

type Step =
  /** The clock moves to this time. */
  | { readonly at: number }
  /** A request of this class asks (`times` of them, each expecting the same). */
  | { readonly ask: FairClass; readonly by?: string; readonly key?: string; readonly demand?: number; readonly times?: number; readonly expect: Expect }
  /** An answer arrived now for a request sent at `sentAt`. */
  | { readonly report: { readonly status?: number; readonly sentAt?: number; readonly key?: string; readonly rateLimit?: RateLimitInfo }; readonly by?: string }
  | { readonly leave: string }
  /** What the account shows now. */
  | { readonly state: Partial<BudgetState>; readonly by?: string };

interface Row {
  readonly name: string;
  /** The processes of the account and their options (default: one, `a`, with the defaults). */
  readonly processes?: Readonly<Record<string, RequestBudgetOptions>>;
  readonly steps: readonly Step[];
}

const LEASE_MS = 10 * 62_000;
const DEFAULT = budgetLimits();
const T = DEFAULT.pacingIntervalMs; // 682
const WINDOW = DEFAULT.minuteWindowMs; // 62,000
const DAY = DEFAULT.dayWindowMs; // 86,402,000
const SPACING = DEFAULT.duplicateStartSpacingMs; // 1,100
/** A wide account whose pacer holds a burst of 100: its interval, 69 ms, and a turn of one run among 21. */
const WIDE: RequestBudgetOptions = { requestsPerMinute: 1_000, safetyMargin: 0, burst: 100 };
const WIDE_T = budgetLimits(WIDE).pacingIntervalMs;
const WIDE_TURN = 21 * WIDE_T;

const asks = (ask: FairClass, times: number, expect: Expect = 'granted', by?: string): Step => ({ ask, times, expect, ...(by === undefined ? {} : { by }) });

const ROWS: readonly Row[] = [
  { name: 'a fresh account lets the burst of 5 go at once', steps: [asks('reads', 5)] },
  { name: 'the request after the burst waits one pacing interval', steps: [asks('reads', 5), { ask: 'reads', expect: { wait: T } }] },
  { name: 'at the pacer\'s time the next one goes', steps: [asks('reads', 5), { at: T }, { ask: 'reads', expect: 'granted' }, { ask: 'reads', expect: { wait: 2 * T } }] },
  { name: 'interactive calls are paced as reads are', steps: [asks('interactive', 5), { ask: 'interactive', expect: { wait: T } }] },
  { name: 'a start is paced like a poll within the minute', steps: [asks('reads', 5), { ask: 'start', key: 's', expect: { wait: T } }] },
  { name: 'an abort is not paced: it goes past a spent burst', steps: [asks('reads', 5), asks('abort', 10)] },
  { name: 'aborts never exceed the service\'s 100 in any window of ours', steps: [asks('abort', 100), { ask: 'abort', expect: { wait: WINDOW } }] },
  {
    name: 'a burst asked for is held to what keeps the pace at 85% of the limit: 8 of 95, then one per 62 s / 88',
    processes: { a: { burst: 95 } },
    steps: [asks('interactive', 8), { ask: 'interactive', expect: { wait: Math.ceil(WINDOW / 88) } }],
  },
  // Aborts are not held to the pace, but they use it up: what follows them is paced after them.
  { name: 'aborts take their slots of the pace: what follows them is paced after them', steps: [asks('abort', 95), { ask: 'reads', expect: { wait: 91 * T } }] },
  { name: 'an identical start waits while the first is on its way', steps: [{ ask: 'start', key: 'c-1 {}', expect: 'granted' }, { at: 5_000 }, { ask: 'start', key: 'c-1 {}', expect: 'wait' }] },
  {
    name: 'an identical start goes the spacing after the answer (service.md §2.2)',
    steps: [{ ask: 'start', key: 'c-1 {}', expect: 'granted' }, { at: 300 }, { report: { status: 200, sentAt: 0, key: 'c-1 {}' } }, { ask: 'start', key: 'c-1 {}', expect: { wait: 300 + SPACING } }, { at: 300 + SPACING }, { ask: 'start', key: 'c-1 {}', expect: 'granted' }],
  },
  { name: 'a start with another body goes at once', steps: [{ ask: 'start', key: 'c-1 {}', expect: 'granted' }, { ask: 'start', key: 'c-1 {"n":2}', expect: 'granted' }] },
  {
    name: 'identical starts are spaced across processes of the account',
    processes: { a: {}, b: {} },
    steps: [{ ask: 'start', key: 'c-1 {}', expect: 'granted' }, { at: 100 }, { report: { status: 200, sentAt: 0, key: 'c-1 {}' } }, { ask: 'start', by: 'b', key: 'c-1 {}', expect: { wait: 100 + SPACING } }],
  },
  {
    name: 'a 429 holds every class until the window after its request\'s send',
    steps: [{ ask: 'reads', expect: 'granted' }, { at: 500 }, { report: { status: 429, sentAt: 0 } }, { ask: 'reads', expect: { wait: WINDOW } }, { ask: 'start', key: 's', expect: { wait: WINDOW } }, { ask: 'abort', expect: { wait: WINDOW } }, { state: { pausedUntil: WINDOW } }],
  },
  {
    name: 'a 429 holds every process of the account',
    processes: { a: {}, b: {} },
    steps: [{ ask: 'reads', expect: 'granted' }, { at: 500 }, { report: { status: 429, sentAt: 0 } }, { ask: 'interactive', by: 'b', expect: { wait: WINDOW } }],
  },
  { name: 'a throttler\'s Retry-After pauses from the answer, for as long as it says', steps: [{ ask: 'reads', expect: 'granted' }, { at: 500 }, { report: { status: 429, sentAt: 0, rateLimit: { retryAfterMs: 5_000 } } }, { ask: 'reads', expect: { wait: 5_500 } }] },
  { name: 'a Retry-After never pauses longer than one window', steps: [{ ask: 'reads', expect: 'granted' }, { at: 500 }, { report: { status: 429, sentAt: 0, rateLimit: { retryAfterMs: 3_600_000 } } }, { ask: 'reads', expect: { wait: 500 + WINDOW } }] },
  {
    name: 'after a 429\'s pause one request goes, then the pace: no burst',
    steps: [{ ask: 'reads', expect: 'granted' }, { report: { status: 429, sentAt: 0 } }, { at: WINDOW }, { ask: 'reads', expect: 'granted' }, { ask: 'reads', expect: { wait: WINDOW + T } }],
  },
  {
    name: 'the service\'s lower limit per minute is the account\'s (service.md §2.1)',
    steps: [{ report: { status: 200, rateLimit: { limitPerMinute: 10 } } }, asks('reads', 2), { ask: 'reads', expect: { wait: Math.ceil(WINDOW / 9) } }, { state: { limitPerMinute: 10 } }],
  },
  { name: 'a limit above the configured one changes nothing', steps: [{ report: { status: 200, rateLimit: { limitPerMinute: 1_000, limitPerDay: 50_000 } } }, asks('reads', 5), { ask: 'reads', expect: { wait: T } }, { state: { limitPerMinute: 100, limitPerDay: 10_000 } }] },
  {
    name: 'a remaining count below ours spreads what is left over the window (another process on the account)',
    steps: [{ ask: 'reads', expect: 'granted' }, { report: { status: 200, sentAt: 0, rateLimit: { remainingPerMinute: 40 } } }, { ask: 'reads', expect: { wait: WINDOW / 35 } }, { state: { followingServer: true } }],
  },
  {
    name: 'a later answer that shows no gap lifts the cap',
    steps: [{ ask: 'reads', expect: 'granted' }, { report: { status: 200, sentAt: 0, rateLimit: { remainingPerMinute: 40 } } }, { report: { status: 200, sentAt: 0, rateLimit: { remainingPerMinute: 99 } } }, { ask: 'reads', expect: 'granted' }, { state: { followingServer: false } }],
  },
  {
    name: 'with only the safety margin left, reads wait for the window and an abort still goes',
    steps: [{ ask: 'reads', expect: 'granted' }, { report: { status: 200, sentAt: 0, rateLimit: { remainingPerMinute: 3 } } }, { ask: 'reads', expect: { wait: WINDOW } }, { ask: 'abort', expect: 'granted' }],
  },
  { name: 'with nothing left this minute, even an abort waits for the window', steps: [{ ask: 'reads', expect: 'granted' }, { report: { status: 200, sentAt: 0, rateLimit: { remainingPerMinute: 0 } } }, { ask: 'abort', expect: { wait: WINDOW } }] },
  {
    name: 'a count stuck at zero is no longer followed once a request sent after it ran out is answered with success and zero again',
    steps: [
      { ask: 'reads', expect: 'granted' },
      { at: 100 },
      { report: { status: 200, sentAt: 0, rateLimit: { remainingPerMinute: 0 } } },
      { ask: 'reads', expect: { wait: WINDOW } },
      { at: WINDOW },
      { ask: 'reads', expect: 'granted' },
      { report: { status: 200, sentAt: WINDOW, rateLimit: { remainingPerMinute: 0 } } },
      { ask: 'reads', expect: 'granted' },
    ],
  },
  {
    name: 'a day with nothing left for polls looks again after a minute\'s window, never a day later',
    steps: [{ ask: 'reads', expect: 'granted' }, { report: { status: 200, sentAt: 0, rateLimit: { remainingPerDay: 0 } } }, { ask: 'reads', expect: { wait: WINDOW } }],
  },
  { name: 'the service\'s spent day refuses a start until its window can have reset', steps: [{ ask: 'reads', expect: 'granted' }, { report: { status: 200, sentAt: 0, rateLimit: { remainingPerDay: 0 } } }, { ask: 'start', key: 's', expect: { refused: DAY } }] },
  {
    name: 'our own spent day refuses a start, the day counted by minute',
    processes: { a: { requestsPerDay: 4, dayReserve: 0 } },
    steps: [{ at: 30_000 }, asks('start', 4), { ask: 'start', key: 's5', expect: { refused: 60_000 + DAY } }],
  },
  {
    name: 'polls and interactive calls never take the day\'s reserve; starts take its first half, aborts the rest',
    processes: { a: { requestsPerMinute: 1_000, requestsPerDay: 20, dayReserve: 0.5, dayBurst: 0.9, burst: 20 } },
    steps: [asks('reads', 9), { ask: 'reads', expect: 'wait' }, { ask: 'interactive', expect: 'wait' }, asks('start', 6), { ask: 'start', key: 'late', expect: 'refused' }, asks('abort', 5), { ask: 'abort', expect: { wait: 60_000 + DAY } }],
  },
  {
    name: 'the day\'s bucket lets sporadic use go at the minute\'s pace, then the day\'s sustainable pace',
    processes: { a: { requestsPerMinute: 1_000, requestsPerDay: 100, burst: 20 } },
    steps: [asks('reads', 9), { ask: 'reads', expect: 'wait' }, { ask: 'abort', expect: 'granted' }, { state: { usedThisMinute: 10 } }],
  },
  {
    name: 'each process\'s reads get the share of the pace its waiting runs make of the account\'s',
    processes: { three: { requestsPerMinute: 200, safetyMargin: 0, burst: 100 }, one: { requestsPerMinute: 200, safetyMargin: 0, burst: 100 } },
    steps: [
      { ask: 'reads', by: 'three', demand: 3, expect: 'granted' },
      { ask: 'reads', by: 'one', demand: 1, expect: 'granted' },
      // The shares add up to the pacer's whole pace: 4 runs wait, the 1-run process reads every 4 intervals.
      { ask: 'reads', by: 'one', demand: 1, expect: { wait: 4 * budgetLimits({ requestsPerMinute: 200, safetyMargin: 0, burst: 100 }).pacingIntervalMs } },
    ],
  },
  {
    name: 'a process that leaves gives its share back at once',
    processes: { a: { requestsPerMinute: 200, safetyMargin: 0, burst: 100 }, b: { requestsPerMinute: 200, safetyMargin: 0, burst: 100 } },
    steps: [{ ask: 'reads', by: 'b', demand: 20, expect: 'granted' }, { ask: 'reads', demand: 1, expect: 'granted' }, { ask: 'reads', demand: 1, expect: 'wait' }, { leave: 'b' }, { ask: 'reads', demand: 1, expect: 'granted' }],
  },
  {
    name: 'a process killed with -9 lends its share to the others once it has missed its turns, long before its lease runs out',
    processes: { a: WIDE, b: WIDE },
    // b's 20 runs take 20/21 of the pace; b reads no more. A process late for its turn keeps one turn
    // of it: after a long spell, two reads, then its share. Once b is a whole burst of the pacer (100
    // × 69 ms) past its turn, a reads at the account's pace, its lease (10 minutes) still running.
    steps: [
      { ask: 'reads', by: 'b', demand: 20, expect: 'granted' },
      { ask: 'reads', demand: 1, expect: 'granted' },
      { at: Math.round(2.35 * WIDE_TURN) },
      asks('reads', 2),
      { ask: 'reads', demand: 1, expect: 'wait' },
      { at: 100 * WIDE_T + 100 },
      asks('reads', 5),
    ],
  },
  {
    name: 'a process killed -9 before its first read was granted lends its share too',
    processes: { a: { requestsPerMinute: 200, safetyMargin: 0, burst: 1 }, b: { requestsPerMinute: 200, safetyMargin: 0, burst: 1 } },
    // b asks for its 20 runs' first read while the pacer (one per 310 ms) is spent, and is heard of no
    // more: its share goes to a, which then reads at the pacer's pace — not, after catching up on two
    // missed turns, every 21 × 310 ms.
    steps: [
      { ask: 'reads', demand: 1, expect: 'granted' },
      { ask: 'reads', by: 'b', demand: 20, expect: 'wait' },
      { at: 100_000 },
      { ask: 'reads', demand: 1, expect: 'granted' },
      { at: 100_310 },
      { ask: 'reads', demand: 1, expect: 'granted' },
      { at: 100_620 },
      { ask: 'reads', demand: 1, expect: 'granted' },
      { at: 100_930 },
      { ask: 'reads', demand: 1, expect: 'granted' },
    ],
  },
  {
    name: 'a process late for its turns catches up on the two it may miss before its share is lent',
    processes: { a: WIDE, b: WIDE },
    // a's turn comes every 21 × 69 ms = 1,449 ms; at four turns it has missed three: it catches up on
    // two of them besides the one due now, then waits for its share again.
    steps: [{ ask: 'reads', by: 'b', demand: 20, expect: 'granted' }, { ask: 'reads', demand: 1, expect: 'granted' }, { at: 4 * WIDE_TURN }, asks('reads', 3), { ask: 'reads', demand: 1, expect: { wait: 5 * WIDE_TURN } }],
  },
  {
    name: 'a process configured lower is held to its own pace',
    processes: { fast: { requestsPerMinute: 100, burst: 20 }, slow: { requestsPerMinute: 30 } },
    steps: [{ ask: 'interactive', by: 'fast', expect: 'granted' }, asks('interactive', budgetLimits({ requestsPerMinute: 30 }).burst, 'granted', 'slow'), { ask: 'interactive', by: 'slow', expect: { wait: budgetLimits({ requestsPerMinute: 30 }).pacingIntervalMs } }, { ask: 'interactive', by: 'fast', expect: 'granted' }],
  },
  {
    name: 'a process configured lower does not slow the account',
    processes: { fast: { requestsPerMinute: 100 }, slow: { requestsPerMinute: 30 } },
    steps: [{ ask: 'interactive', by: 'fast', expect: 'granted' }, { ask: 'interactive', by: 'slow', expect: 'granted' }, asks('interactive', 3, 'granted', 'fast'), { ask: 'interactive', by: 'fast', expect: { wait: T } }],
  },
  {
    name: 'a start waiting for the pace in one process holds the other processes\' reads and interactive calls until its slot has gone, then they take the next',
    processes: { a: {}, b: {} },
    // b's start waits for the slot at T; a's reads and interactive calls yield to it (its claim: the
    // slot and a lease of the pacer's burst, 5 intervals); once granted, the claim goes and a reads at the next slot.
    steps: [asks('reads', 5), { ask: 'start', by: 'b', key: 's', expect: { wait: T } }, { ask: 'reads', expect: { wait: 6 * T } }, { ask: 'interactive', expect: { wait: 6 * T } }, { at: T }, { ask: 'start', by: 'b', key: 's', expect: 'granted' }, { ask: 'reads', expect: { wait: 2 * T } }],
  },
  {
    name: 'a start granted with more of its process\'s starts waiting behind it claims the next slot for them',
    processes: { a: {}, b: {} },
    steps: [asks('reads', 4), { ask: 'start', by: 'b', key: 's-1', demand: 3, expect: 'granted' }, { ask: 'reads', expect: { wait: 6 * T } }, { at: T }, { ask: 'start', by: 'b', key: 's-2', demand: 2, expect: 'granted' }, { ask: 'start', by: 'b', key: 's-3', demand: 1, expect: { wait: 2 * T } }, { at: 2 * T }, { ask: 'start', by: 'b', key: 's-3', demand: 1, expect: 'granted' }, { ask: 'reads', expect: { wait: 3 * T } }],
  },
  {
    name: 'a waiting start\'s claim lapses when its process asks no more (stalled, killed): the others read after its lease',
    processes: { a: {}, b: {} },
    steps: [asks('reads', 5), { ask: 'start', by: 'b', key: 's', expect: { wait: T } }, { at: 2 * T }, { ask: 'reads', expect: { wait: 6 * T } }, { at: 6 * T }, { ask: 'reads', expect: 'granted' }],
  },
  {
    name: 'a process that asks for a read has no start waiting: its claim goes',
    processes: { a: {}, b: {} },
    steps: [asks('reads', 5), { ask: 'start', by: 'b', key: 's', expect: { wait: T } }, { ask: 'interactive', expect: { wait: 6 * T } }, { ask: 'reads', by: 'b', expect: { wait: T } }, { ask: 'interactive', expect: { wait: T } }],
  },
  {
    name: 'a start waiting for an identical start\'s spacing, or for its process\'s own lower pace, holds no one',
    processes: { a: {}, b: {}, slow: { requestsPerMinute: 30, burst: 1 } },
    steps: [
      { ask: 'start', by: 'b', key: 'c-1 {}', expect: 'granted' },
      { ask: 'start', by: 'b', key: 'c-1 {}', expect: 'wait' },
      { ask: 'reads', expect: 'granted' },
      { ask: 'start', by: 'slow', key: 'c-2 {}', expect: 'granted' },
      { ask: 'start', by: 'slow', key: 'c-3 {}', expect: 'wait' },
      { ask: 'reads', expect: 'granted' },
    ],
  },
  {
    name: 'the state counts the minute and the day, and what the day has left',
    steps: [asks('reads', 5), asks('abort', 3), { state: { usedThisMinute: 8, usedToday: 8, remainingThisMinute: 92, remainingToday: 9_992, nextSendAt: 4 * T } }, { at: 61_000 }, { state: { usedThisMinute: 0, usedToday: 8 } }],
  },
];

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
});
afterAll(async () => {
  redis.disconnect();
  await server.close();
});

/** The account's ledgers as a row's processes see them: `transact` for each process by name. */
type Ledgers = (process: string, config: AccountConfig) => <T>(now: number, change: AccountChange<T>) => Promise<T>;

let account = 0;
const implementations: readonly (readonly [string, () => Ledgers])[] = [
  [
    'in memory',
    () => {
      const ledger = createMemoryLedger();
      return () => (now, change) => Promise.resolve(ledger.transact(now, change));
    },
  ],
  [
    'in Redis',
    () => {
      const name = `conformance-${account++}`;
      const ledgers = new Map<string, RedisLedger>();
      return (process, config) => {
        let ledger = ledgers.get(process);
        if (ledger === undefined) {
          ledger = new RedisLedger(redis, { account: name, config });
          ledgers.set(process, ledger);
        }
        const own = ledger;
        return (now, change) => own.transact(now, change);
      };
    },
  ],
];

function outcome(verdict: Verdict): Expect {
  return verdict.verdict === 'granted' ? 'granted' : verdict.verdict === 'wait' ? { wait: verdict.at } : { refused: verdict.at };
}

function matches(verdict: Verdict, expected: Expect): boolean {
  if (typeof expected === 'string') return verdict.verdict === expected;
  if ('wait' in expected) return verdict.verdict === 'wait' && Math.abs(verdict.at - expected.wait) < 1e-6;
  return verdict.verdict === 'refused' && Math.abs(verdict.at - expected.refused) < 1e-6;
}

async function play(row: Row, ledgers: Ledgers): Promise<void> {
  const processes = row.processes ?? { a: {} };
  const configs = new Map(Object.entries(processes).map(([id, options]) => [id, { options, process: new SharedProcess(id, LEASE_MS) } satisfies AccountConfig]));
  const configOf = (by: string | undefined): AccountConfig => configs.get(by ?? Object.keys(processes)[0]!)!;
  let now = 0;
  let n = 0;
  for (const [index, step] of row.steps.entries()) {
    if ('at' in step) now = step.at;
    else if ('ask' in step) {
      const config = configOf(step.by);
      const transact = ledgers(config.process!.id, config);
      for (let time = 0; time < (step.times ?? 1); time++) {
        const startKey = step.ask === 'start' ? (step.key ?? `c-${n++} {}`) : undefined;
        const verdict = await transact(now, (current, at) => {
          const next = requested(current, { klass: step.ask, startKey, demand: step.demand ?? 1 }, at, config);
          return [next.record, next.verdict];
        });
        expect(matches(verdict, step.expect), `step ${index} (${step.ask} #${time + 1}): ${JSON.stringify(outcome(verdict))}, expected ${JSON.stringify(step.expect)}`).toBe(true);
      }
    } else if ('report' in step) {
      const config = configOf(step.by);
      const { status, sentAt, key, rateLimit } = step.report;
      const answer = { sentAt, inFlight: 0, httpStatus: status ?? 200, rateLimit: rateLimit ?? {}, startKey: key };
      await ledgers(config.process!.id, config)(now, (current, at) => [afterReport(current, answer, at, config), undefined]);
    } else if ('leave' in step) {
      const config = configOf(step.leave);
      await ledgers(step.leave, config)(now, (current) => [left(current, config), undefined]);
    } else {
      const config = configOf(step.by);
      const record = await ledgers(config.process!.id, config)(now, (current): [AccountRecord, AccountRecord] => [current, current]);
      const state = accountState(record, config, now, { inFlight: 0, queued: { total: 0, byPriority: { abort: 0, start: 0, interactive: 0, status: 0, output: 0 } }, cadences: {} });
      expect(state, `step ${index}`).toMatchObject(step.state);
    }
  }
}

describe.each(implementations)('the account\'s rules, with the ledger %s', (_name, make) => {
  it('has a row for every rule (at least 30)', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(30);
  });

  it.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_rowName, row) => {
    await play(row, make());
  });
});

describe('the account\'s rules, with the ledger in Redis only', () => {
  it('pauses the account for a window when Redis lost it (a restart with nothing saved), even when an answer\'s report reaches it first', async () => {
    const config: AccountConfig = { options: {}, process: new SharedProcess('a', LEASE_MS) };
    const ledger = new RedisLedger(redis, { account: 'conformance-lost', config });
    const ask = (now: number): Promise<Verdict> =>
      ledger.transact(now, (current, at) => {
        const next = requested(current, { klass: 'reads', demand: 1 }, at, config);
        return [next.record, next.verdict];
      });
    expect(await ask(0)).toEqual({ verdict: 'granted' });
    await redis.del('{fs:conformance-lost}:ledger');
    await ledger.transact(1_000, (current, at) => [afterReport(current, { sentAt: 0, inFlight: 0, httpStatus: 200, rateLimit: {} }, at, config), undefined]);
    expect(await ask(2_000)).toEqual({ verdict: 'wait', at: 1_000 + WINDOW });
  });
});
