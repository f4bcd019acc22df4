import { asyncScheduler, distinctUntilChanged, map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { createAccountBudget } from '../../src/budget/index.js';
import { ticket } from './simulation.js';

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });
}

describe('request budget in marble time', () => {
  it('drains its queue one request per 682 ms once the burst of five is spent', () => {
    testScheduler().run(({ expectObservable }) => {
      const budget = createAccountBudget({ scheduler: asyncScheduler });
      for (let index = 0; index < 7; index++) void budget.acquire(ticket('status', `we-${index}`));
      const depth$ = budget.state$.pipe(
        map((state) => state.queued.total),
        distinctUntilChanged(),
      );
      expectObservable(depth$, '^ 2000ms !').toBe('a 681ms b 681ms c', { a: 2, b: 1, c: 0 });
    });
  });

  it('drops a waiting request the moment its signal aborts', () => {
    testScheduler().run(({ expectObservable }) => {
      const budget = createAccountBudget({ scheduler: asyncScheduler });
      const controller = new AbortController();
      for (let index = 0; index < 6; index++) void budget.acquire(ticket('status', `we-${index}`));
      budget.acquire(ticket('output', 'we-0'), controller.signal).catch(() => undefined);
      asyncScheduler.schedule(() => {
        controller.abort(new Error('unsubscribed'));
      }, 300);
      const waiting$ = budget.state$.pipe(
        map((state) => `${state.queued.byPriority.status}${state.queued.byPriority.output}`),
        distinctUntilChanged(),
      );
      expectObservable(waiting$, '^ 2000ms !').toBe('a 299ms b 381ms c', { a: '11', b: '10', c: '00' });
    });
  });

  it('holds everything for a 429 and lets the queue go one by one afterwards', () => {
    testScheduler().run(({ expectObservable }) => {
      const budget = createAccountBudget({ requestsPerMinute: 10, latencyAllowanceMs: 0, burst: 1, scheduler: asyncScheduler });
      const first = ticket('status', 'we-0');
      void budget.acquire(first);
      asyncScheduler.schedule(() => {
        budget.report({ ticket: first, httpStatus: 429, rateLimit: {} });
        for (let index = 1; index < 3; index++) void budget.acquire(ticket('status', `we-${index}`));
      }, 10);
      const used$ = budget.state$.pipe(
        map((state) => state.usedToday),
        distinctUntilChanged(),
      );
      // Paused until 60 s after the refused request's send, then one per 6 s (10 a minute).
      expectObservable(used$, '^ 70s !').toBe('a 59999ms b 5999ms c', { a: 1, b: 2, c: 3 });
    });
  });
});
