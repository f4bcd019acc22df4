import { describe, expect, it } from 'vitest';
import { createSharedAccountBudget } from '../../src/budget/account-budget.js';
import { shareAccount, type SharedAccount } from '../../src/budget/shared-account.js';
import { afterReport, type AccountConfig, type AccountRecord, newAccountRecord } from '../../src/budget/account-rules.js';
import { clockScheduler, createManualClock, driveClock } from '../../src/emulator/index.js';
import { left, requested, SharedProcess } from '../../src/budget/process-rules.js';

/**
 * A shared account in memory that applies the rule book as the Redis ledger does, whose first grant
 * is held back until the test lets it answer: the request it grants has left by then.
 */
function slowSharedAccount(config: AccountConfig, now: () => number) {
  let record: AccountRecord = newAccountRecord('epoch-1');
  let answerFirst: (() => void) | undefined;
  let first = true;
  const digest = (key: string | undefined): string | undefined => (key === undefined ? undefined : `d:${key}`);
  const shared: SharedAccount = {
    config,
    unavailableAfterMs: 60_000,
    async request(klass, demand, startKey) {
      if (first) {
        first = false;
        await new Promise<void>((resolve) => {
          answerFirst = resolve;
        });
      }
      const at = Math.max(record.at, now());
      const { record: next, verdict } = requested(record, { klass, startKey: digest(startKey), demand }, at, config);
      record = next;
      return { ...verdict, now: at, record: next };
    },
    report(answer) {
      record = afterReport(record, { ...answer, startKey: digest(answer.startKey) }, Math.max(record.at, now()), config);
      return Promise.resolve(record);
    },
    leave() {
      record = left(record, config);
      return Promise.resolve(record);
    },
    markKey: (key) => `d:${key}`,
  };
  return { shared, answerFirst: () => answerFirst?.(), marks: () => record.starts };
}

describe('a shared account and a request that left while it was asked', () => {
  it('is told no answer will come, so an identical start goes once its spacing passed, not after the lease', async () => {
    const clock = createManualClock(1_000_000);
    const scheduler = clockScheduler(clock);
    const config: AccountConfig = { options: { requestsPerMinute: 100, requestsPerDay: 10_000 }, process: new SharedProcess('p1', 124_000) };
    const account = slowSharedAccount(config, () => clock.now());
    const budget = createSharedAccountBudget({ ...config.options, scheduler }, shareAccount(account.shared));
    const ticket = { endpoint: 'run', priority: 'start', key: 'c-1\n{}' } as const;
    const leaving = new AbortController();
    const first = budget.acquire(ticket, leaving.signal).then(
      () => 'granted',
      () => 'left',
    );
    await driveClock(clock, { toTime: 1_000_010 });
    leaving.abort(new Error('the run left'));
    expect(await first).toBe('left');
    // The shared account grants it anyway: a send counted that never went.
    account.answerFirst();
    await driveClock(clock, { toTime: 1_000_020 });
    let again: number | undefined;
    void budget.acquire(ticket).then(() => {
      again = clock.now();
    });
    await driveClock(clock, { until: () => again !== undefined, toTime: 1_010_000 });
    // service.md §2.2: an identical start more than 1 s after the last — not the 124 s of a lease.
    expect(again).toBeDefined();
    expect((again ?? 0) - 1_000_020).toBeLessThan(2_000);
    await budget.close();
  });

  it('takes an abort that comes while close() still sends the aborts it holds, and refuses anything else', async () => {
    const clock = createManualClock(1_000_000);
    const scheduler = clockScheduler(clock);
    const config: AccountConfig = { options: { requestsPerMinute: 100, requestsPerDay: 10_000 }, process: new SharedProcess('p1', 124_000) };
    const account = slowSharedAccount(config, () => clock.now());
    const budget = createSharedAccountBudget({ ...config.options, scheduler }, shareAccount(account.shared));
    const granted: string[] = [];
    const abort = (executionId: string): Promise<void> =>
      budget.acquire({ endpoint: 'abort', priority: 'abort', key: executionId }).then(() => {
        granted.push(executionId);
      });
    const first = abort('we-1');
    await driveClock(clock, { toTime: 1_000_010 });
    const closed = budget.close();
    const second = abort('we-2');
    await expect(budget.acquire({ endpoint: 'status', priority: 'status', key: 'we-3' })).rejects.toMatchObject({ code: 'BUDGET_CLOSED' });
    account.answerFirst();
    await driveClock(clock, { until: () => granted.length === 2, toTime: 1_030_000 });
    await Promise.all([first, second, closed]);
    expect(granted).toEqual(['we-1', 'we-2']);
  });
});

