import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountBudget } from '../../src/budget/index.js';
import type { AccountBudget } from '../../src/domain/budget.js';
import type { GateTicket } from '../../src/domain/requests.js';
import { clockScheduler, createManualClock, type ManualClock } from '../../src/emulator/index.js';
import { isRateLimitError } from '../../src/errors/api-errors.js';
import { createRedisBudget } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * One suite, two account budgets: what a client relies on, checked against the in-memory
 * budget and the Redis one alike, both on a manual clock.
 */
let server: RedisServer;
let redis: Redis;
let account = 0;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis({ path: server.socket, maxRetriesPerRequest: null });
});
afterAll(async () => {
  redis.disconnect();
  await server.close();
});

type Options = { readonly requestsPerMinute?: number; readonly requestsPerDay?: number };
// Both on a clock that stands still: what goes at once is decided by the account, never by how long Redis takes.
const implementations: readonly (readonly [string, (options: Options) => AccountBudget])[] = [
  ['in memory', (options) => createAccountBudget({ ...options, scheduler: clockScheduler(createManualClock()) })],
  ['in Redis', (options) => createRedisBudget({ ...options, redis, account: `conformance-${account++}`, scheduler: clockScheduler(createManualClock()), durations: false })],
];

const read = (key: string): GateTicket => ({ endpoint: 'status', priority: 'status', key });
const start = (body: string): GateTicket => ({ endpoint: 'run', priority: 'start', key: `c-1\n${body}` });
const abort = (key: string): GateTicket => ({ endpoint: 'abort', priority: 'abort', key });

/**
 * Lets everything that can happen without the clock moving happen: the budget's calls to Redis are
 * answered and the promise chains after them have run. A PING on the connection the Redis budget uses
 * is answered after every command sent before it; the turns after it let the budget send its next call,
 * and once none is left on the connection, nothing more moves at once (the clock stands still: only
 * the account decides). Readiness only: bounded by a count of rounds, never by time.
 */
async function settled(): Promise<void> {
  for (let round = 0; round < 200; round += 1) {
    await redis.ping();
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    if (redis.commandQueue.length === 0) return;
  }
  throw new Error('the budget kept calling Redis for 200 rounds with the clock standing still');
}

/**
 * Asks `budget` for each ticket and resolves, once nothing more moves at once (`settled`), with the
 * tickets let through, in order, and the refusals; `leave` withdraws those still waiting.
 */
async function letThrough(budget: AccountBudget, tickets: readonly GateTicket[]): Promise<{ passed: string[]; refused: unknown[]; leave: () => void }> {
  const passed: string[] = [];
  const refused: unknown[] = [];
  const controllers = tickets.map(() => new AbortController());
  tickets.forEach((ticket, index) => {
    budget.acquire(ticket, controllers[index]!.signal).then(
      () => passed.push(`${ticket.endpoint}:${ticket.key ?? ''}`),
      (error: unknown) => refused.push(error),
    );
  });
  await settled();
  return { passed, refused, leave: () => { for (const controller of controllers) controller.abort(new Error('left')); } };
}

/** Both budgets on one manual clock: their timers fire only when the test moves it. */
const onClock = (clock: ManualClock): readonly (readonly [string, () => AccountBudget])[] => [
  ['in memory', () => createAccountBudget({ scheduler: clockScheduler(clock) })],
  ['in Redis', () => createRedisBudget({ redis, account: `conformance-${account++}`, scheduler: clockScheduler(clock), durations: false })],
];

describe.each(['in memory', 'in Redis'])('the account budget %s, on a manual clock', (name) => {
  const make = (clock: ManualClock): AccountBudget => onClock(clock).find(([implementation]) => implementation === name)![1]();

  it('sends an identical start only once the first is answered and the duplicate window has passed (service.md §2.2)', async () => {
    const clock = createManualClock(0);
    const budget = make(clock);
    const first = await letThrough(budget, [start('{"same":1}')]);
    expect(first.passed).toHaveLength(1);
    const second = await letThrough(budget, [start('{"same":1}')]);
    expect(second.passed).toEqual([]);
    expect(budget.snapshot().queued.total).toBe(1);
    budget.report({ ticket: start('{"same":1}'), httpStatus: 200, rateLimit: {} });
    await settled();
    clock.advance(1_000);
    await settled();
    expect(second.passed).toEqual([]);
    clock.advance(200);
    await settled();
    expect(second.passed).toEqual(['run:c-1\n{"same":1}']);
    await budget.close();
  });

  it('shows the account\'s state and schedules the runs\' reads as the in-memory budget does', async () => {
    const clock = createManualClock(0);
    const budget = make(clock);
    const { leave } = await letThrough(budget, Array.from({ length: 7 }, (_, index) => read(`we-${index}`)));
    expect(budget.snapshot()).toMatchObject({ usedThisMinute: 5, remainingThisMinute: 95, usedToday: 5, nextSendAt: 682, day: { used: 5, reserve: 500 }, queued: { total: 2 } });
    expect(typeof budget.needRead).toBe('function');
    budget.report({ ticket: read('we-0'), httpStatus: 429, rateLimit: {} });
    await settled();
    expect(budget.snapshot().pausedUntil).toBe(62_000);
    leave();
    await budget.close();
  });
});

describe.each(implementations)('the account budget %s', (_name, make) => {
  it('lets the burst go at once and holds the rest for the pacer', async () => {
    const budget = make({});
    const { passed, leave } = await letThrough(budget, Array.from({ length: 8 }, (_, index) => read(`we-${index}`)));
    expect(passed).toHaveLength(5);
    expect(budget.snapshot().queued.total).toBe(3);
    leave();
    await budget.close();
  });

  it('sends an abort ahead of the reads that wait', async () => {
    const budget = make({});
    const first = await letThrough(budget, Array.from({ length: 5 }, (_, index) => read(`we-${index}`)));
    expect(first.passed).toHaveLength(5);
    const next = await letThrough(budget, [read('we-late'), abort('we-0')]);
    expect(next.passed).toEqual(['abort:we-0']);
    expect(budget.snapshot().queued.total).toBe(1);
    next.leave();
    await budget.close();
  });

  it('refuses at once a start the day cannot take, with a RateLimitError of scope day', async () => {
    const budget = make({ requestsPerDay: 4 });
    const { passed, refused, leave } = await letThrough(budget, [start('{"n":1}'), start('{"n":2}'), start('{"n":3}'), start('{"n":4}'), start('{"n":5}')]);
    expect(passed.length).toBeLessThan(5);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((error) => isRateLimitError(error) && error.scope === 'day')).toBe(true);
    leave();
    await budget.close();
  });

  it('holds everything after a 429, for every client of the account', async () => {
    const budget = make({});
    const first = await letThrough(budget, [read('we-1')]);
    expect(first.passed).toHaveLength(1);
    budget.report({ ticket: read('we-1'), httpStatus: 429, rateLimit: {} });
    await settled();
    const after = await letThrough(budget, [read('we-2'), start('{"n":9}')]);
    expect(after.passed).toEqual([]);
    expect(budget.snapshot().queued.total).toBe(2);
    after.leave();
    await budget.close();
  });

  it('rejects what still waits when it is closed, and refuses new requests', async () => {
    const budget = make({});
    const { refused } = await letThrough(budget, Array.from({ length: 7 }, (_, index) => read(`we-${index}`)));
    expect(refused).toEqual([]);
    await budget.close();
    await settled();
    expect(refused.length).toBe(2);
    await expect(budget.acquire(read('we-x'))).rejects.toMatchObject({ code: 'BUDGET_CLOSED' });
  });
});
