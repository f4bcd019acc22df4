import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAccountBudget, createMemoryLedger, isAccountBudget } from '../../src/budget/index.js';
import type { BudgetState } from '../../src/budget/index.js';
import { createClient } from '../../src/client.js';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';
import { isFlowstreamError } from '../../src/errors/flowstream-error.js';
import { isRateLimitError } from '../../src/errors/api-errors.js';
import { ticket } from './simulation.js';

const options = { apiKey: 'rf_00000000000000000000000000000000', baseUrl: 'http://127.0.0.1:1/v1' };

/** One turn of the event loop: every promise chain that can move without a timer has moved. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A fetch that answers every request at once: an execution for a start, an empty page otherwise. */
function answeringFetch(): { readonly fetch: typeof globalThis.fetch; readonly urls: string[] } {
  const urls: string[] = [];
  const fetch = (input: RequestInfo | URL): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    urls.push(url);
    return Promise.resolve(Response.json({ success: true, data: url.endsWith('/run') ? { executionId: 'we-aaaaaaaaaaaaaaaaaaaaaaaa', status: 'running' } : [] }));
  };
  return { fetch, urls };
}

describe('an account budget shared by several clients', () => {
  it('counts every client\'s requests in one window, and holds all of them to one burst', async () => {
    const clock = createManualClock(0);
    const budget = createAccountBudget({ burst: 3, scheduler: clockScheduler(clock) });
    const server = answeringFetch();
    const reports = createClient({ ...options, fetch: server.fetch, budget });
    const imports = createClient({ ...options, fetch: server.fetch, budget });
    expect(reports.budget?.snapshot()).toEqual(imports.budget?.snapshot());
    const calls = [...Array.from({ length: 4 }, () => reports.workflows.search({})), ...Array.from({ length: 4 }, () => imports.workflows.search({}))];
    await settled();
    // Time stands still: the account's burst of three went, whichever client asked.
    expect(server.urls).toHaveLength(3);
    expect(budget.snapshot()).toMatchObject({ usedThisMinute: 3, queued: { total: 5, byPriority: { interactive: 5 } } });
    for (let step = 0; step < 10; step++) {
      clock.advance(1_000);
      await settled();
    }
    await Promise.all(calls);
    expect(server.urls).toHaveLength(8);
    expect(reports.budget?.snapshot().usedThisMinute).toBe(8);
    await budget.close();
  });

  it('keeps the account in the ledger it is given: two budgets on one ledger count one window and one burst', async () => {
    const clock = createManualClock(0);
    const ledger = createMemoryLedger();
    const first = createAccountBudget({ ledger, scheduler: clockScheduler(clock) });
    const second = createAccountBudget({ ledger, scheduler: clockScheduler(clock) });
    const granted: string[] = [];
    for (const key of ['we-1', 'we-2', 'we-3']) void first.acquire(ticket('status', key)).then(() => granted.push(key));
    for (const key of ['we-4', 'we-5', 'we-6']) void second.acquire(ticket('status', key)).then(() => granted.push(key), () => undefined);
    await settled();
    // The burst of 5 is the account's, whichever budget asks.
    expect(granted).toHaveLength(5);
    expect(second.snapshot()).toMatchObject({ usedThisMinute: 5 });
    await Promise.all([first.close(), second.close()]);
  });

  it('is told apart from the options of a budget', () => {
    expect(isAccountBudget(createAccountBudget())).toBe(true);
    expect(isAccountBudget({ requestsPerMinute: 10 })).toBe(false);
  });
});

describe('a start the day cannot take', () => {
  it('fails at once with RateLimitError (scope day, resetAt), sends nothing and is not retried', async () => {
    const clock = createManualClock(0);
    const server = answeringFetch();
    // 4 a day: polls stop at 2, starts at 3, aborts at 4.
    const client = createClient({ ...options, fetch: server.fetch, budget: { requestsPerDay: 4, dayReserve: 0.5 }, scheduler: clockScheduler(clock) });
    for (const canvasId of ['c-1', 'c-2', 'c-3']) await client.executions.start(canvasId);
    clock.advance(60_000);
    const error = await client.executions.start('c-4').catch((caught: unknown) => caught);
    expect(isRateLimitError(error)).toBe(true);
    // The day counts its sends by minute: the first start, sent in the minute [0, 60 s), leaves the
    // day's window (a day and the latency allowance) once that whole minute has.
    expect(error).toMatchObject({ endpoint: 'run', scope: 'day', resetAt: 60_000 + 86_402_000, rateLimit: { remainingPerDay: 0 } });
    expect((error as Error).message).toMatch(/refused this start before sending it/u);
    expect(server.urls).toHaveLength(3);
    // An abort still goes: the last of the reserve is kept for it.
    await client.executions.abort('we-aaaaaaaaaaaaaaaaaaaaaaaa');
    expect(server.urls).toHaveLength(4);
  });
});

describe('closing an account budget', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0, toFake: ['setInterval', 'clearInterval', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects what still waits and what comes later, completes its state, and leaves no timer', async () => {
    const budget = createAccountBudget({ burst: 1 });
    const states: BudgetState[] = [];
    let completed = false;
    budget.state$.subscribe({ next: (state) => states.push(state), complete: () => (completed = true) });
    await budget.acquire(ticket('status', 'we-1'));
    const waiting = budget.acquire(ticket('status', 'we-2')).catch((error: unknown) => error);
    expect(vi.getTimerCount()).toBe(1);
    await budget.close();
    const error = await waiting;
    expect(isFlowstreamError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'BUDGET_CLOSED' });
    await expect(budget.acquire(ticket('status', 'we-3'))).rejects.toMatchObject({ code: 'BUDGET_CLOSED' });
    expect(vi.getTimerCount()).toBe(0);
    expect(completed).toBe(true);
    expect(budget.snapshot()).toMatchObject({ queued: { total: 0 }, inFlight: 1 });
    // The answer of the request already sent still counts.
    budget.report({ ticket: ticket('status', 'we-1'), httpStatus: 200, rateLimit: {} });
    expect(budget.snapshot().inFlight).toBe(0);
    await budget.close();
  });

  it('publishes its state on subscription and after each change, to subscribers only', async () => {
    const budget = createAccountBudget();
    const seen: number[] = [];
    await budget.acquire(ticket('status', 'we-1'));
    const subscription = budget.state$.subscribe((state) => seen.push(state.usedThisMinute));
    await budget.acquire(ticket('status', 'we-2'));
    subscription.unsubscribe();
    await budget.acquire(ticket('status', 'we-3'));
    // The state on subscription, then one per change while subscribed; none after.
    expect(seen).toEqual([1, 2]);
  });
});
