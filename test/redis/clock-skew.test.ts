import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockScheduler, createManualClock, type Clock, type ManualClock } from '../../src/emulator/index.js';
import { openRedisAccount } from '../../src/cli/budget/redis-account.js';
import { isFlowstreamError } from '../../src/errors/index.js';
import { createRedisBudget, type RedisBudget } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/*
 * Two processes of one account whose clocks disagree: one is 30 s behind the other (a host whose clock
 * was not synchronised). The account's clock is the one ahead (it never steps back): the process behind
 * must live on it too. Both clocks are one manual clock, read with an offset; Redis is real. The clock
 * moves to the next timer once Redis had a few real ms to answer (waiting for its answers only).
 */

const BEHIND_MS = 30_000;

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.close();
});

function behind(clock: ManualClock, ms: number): Clock {
  return { speed: 0, now: () => clock.now() - ms, setTimer: (callback, delayMs) => clock.setTimer(callback, delayMs) };
}

/** Moves `clock` on to `until`, to its next timer at a time (at most 500 ms), letting Redis answer in between. */
async function runClock(clock: ManualClock, until: () => boolean, limit: number): Promise<void> {
  while (!until() && clock.now() < limit) {
    await new Promise((resolve) => setTimeout(resolve, 3));
    const next = clock.nextTimerAt() ?? clock.now() + 100;
    clock.advance(Math.max(0, Math.min(next, clock.now() + 500, limit) - clock.now()));
  }
}

function budgets(account: string, clock: ManualClock): [RedisBudget, RedisBudget] {
  const redis = `redis+unix://${server.socket}`;
  // Long enough that a slow machine's Redis is never taken for away.
  const common = { redis, account, durations: false, unavailableAfterMs: 3_600_000 } as const;
  return [createRedisBudget({ ...common, scheduler: clockScheduler(clock) }), createRedisBudget({ ...common, scheduler: clockScheduler(behind(clock, BEHIND_MS)) })];
}

async function closeAll(clock: ManualClock, all: readonly RedisBudget[]): Promise<void> {
  let closed = 0;
  for (const budget of all) void budget.close().then(() => (closed += 1));
  await runClock(clock, () => closed === all.length, clock.now() + 3_600_000);
}

describe('a process whose clock is behind the account\'s', () => {
  it('gets its fair share of the reads: 2 runs in each process, read alike', { timeout: 60_000 }, async () => {
    const clock = createManualClock();
    const [ahead, late] = budgets('acct-skew-fair', clock);
    const sent = { ahead: 0, late: 0 };
    let stop = false;
    const reading = async (budget: RedisBudget, name: keyof typeof sent, key: string): Promise<void> => {
      while (!stop) {
        const ticket = { endpoint: 'status', priority: 'status', key } as const;
        try {
          await budget.acquire(ticket);
        } catch (error) {
          // The read waiting when the budgets close is refused: the end of the test, not a failure.
          if (isFlowstreamError(error) && error.code === 'BUDGET_CLOSED') return;
          throw error;
        }
        sent[name] += 1;
        budget.report({ ticket, httpStatus: 200, rateLimit: {} });
      }
    };
    const start = clock.now();
    for (const key of ['we-1', 'we-2']) {
      void reading(ahead, 'ahead', `${key}-ahead`);
      void reading(late, 'late', `${key}-late`);
    }
    await runClock(clock, () => false, start + 180_000);
    stop = true;
    const total = sent.ahead + sent.late;
    expect(total).toBeGreaterThan(200);
    expect(sent.late / total).toBeGreaterThan(0.4);
    expect(sent.late / total).toBeLessThan(0.6);
    await closeAll(clock, [ahead, late]);
  });

  it('pauses the account for the whole window after a 429 it met', { timeout: 60_000 }, async () => {
    const clock = createManualClock();
    const [ahead, late] = budgets('acct-skew-429', clock);
    // The account's clock is the one ahead: its process asked first.
    let first = false;
    void ahead.acquire({ endpoint: 'status', priority: 'status', key: 'we-first' }).then(() => (first = true));
    await runClock(clock, () => first, clock.now() + 10_000);
    const read = { endpoint: 'status', priority: 'status', key: 'we-late' } as const;
    let granted = false;
    void late.acquire(read).then(() => (granted = true));
    await runClock(clock, () => granted, clock.now() + 10_000);
    const metAt = clock.now();
    late.report({ ticket: read, httpStatus: 429, rateLimit: { remainingPerMinute: 0 } });
    // Another process's request sent while the 429's report is on its way to Redis is not paused by it
    // (the two are concurrent): the one asked here is asked once the account holds the pause.
    const account = await openRedisAccount(`redis+unix://${server.socket}`, 'acct-skew-429');
    try {
      for (;;) {
        const { record } = await account.read();
        if (typeof record?.pausedUntil === 'number' && record.pausedUntil > metAt) break;
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    } finally {
      await account.close();
    }
    let next: number | undefined;
    void ahead.acquire({ endpoint: 'status', priority: 'status', key: 'we-ahead' }).then(() => (next = clock.now()));
    await runClock(clock, () => next !== undefined, metAt + 300_000);
    // The service's window can reset 60 s after the request met it: not sooner.
    expect(next! - metAt).toBeGreaterThanOrEqual(60_000);
    await closeAll(clock, [ahead, late]);
  });
});
