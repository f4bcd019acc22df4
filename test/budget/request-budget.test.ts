import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAccountBudget } from '../../src/budget/index.js';
import type { BudgetState } from '../../src/budget/index.js';
import { ticket } from './simulation.js';

const PACE = 682;

/** Settles every promise reaction queued so far, without letting any time pass. */
async function settled(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

function track(promise: Promise<void>): { readonly state: () => 'waiting' | 'sent' | 'rejected'; readonly reason: () => unknown } {
  let state: 'waiting' | 'sent' | 'rejected' = 'waiting';
  let reason: unknown;
  promise.then(
    () => (state = 'sent'),
    (error: unknown) => {
      state = 'rejected';
      reason = error;
    },
  );
  return { state: () => state, reason: () => reason };
}

describe('createRequestBudget', () => {
  beforeEach(() => {
    // The budget's clock is the client's scheduler, RxJS's asyncScheduler by default: Date.now and setInterval.
    vi.useFakeTimers({ now: 0, toFake: ['setInterval', 'clearInterval', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a request go at once under the limit and leaves no timer behind', async () => {
    const budget = createAccountBudget();
    await budget.acquire(ticket('status', 'we-1'));
    expect(budget.snapshot()).toMatchObject({ usedThisMinute: 1, inFlight: 1, queued: { total: 0 } });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('releases waiting requests at the steady pace with a single timer, and none once drained', async () => {
    const budget = createAccountBudget();
    const requests = Array.from({ length: 8 }, (_, index) => track(budget.acquire(ticket('status', `we-${index}`))));
    await settled();
    expect(requests.map((request) => request.state())).toEqual(['sent', 'sent', 'sent', 'sent', 'sent', 'waiting', 'waiting', 'waiting']);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(PACE);
    expect(requests[5]!.state()).toBe('sent');
    expect(requests[6]!.state()).toBe('waiting');
    await vi.advanceTimersByTimeAsync(2 * PACE);
    expect(requests.every((request) => request.state() === 'sent')).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drops a waiting request at once when its signal aborts, rejecting with the signal\'s reason', async () => {
    const budget = createAccountBudget({ burst: 1 });
    await budget.acquire(ticket('status', 'busy'));
    const controller = new AbortController();
    const removeListener = vi.spyOn(controller.signal, 'removeEventListener');
    const dropped = track(budget.acquire(ticket('status', 'we-1'), controller.signal));
    expect(budget.snapshot().queued.byPriority.status).toBe(1);
    const reason = new Error('run unsubscribed');
    controller.abort(reason);
    expect(budget.snapshot().queued.total).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await settled();
    expect(dropped.state()).toBe('rejected');
    expect(dropped.reason()).toBe(reason);
    expect(removeListener).not.toHaveBeenCalled(); // `once: true` already removed it
    // Nothing was freed: the next request still waits its turn.
    const next = track(budget.acquire(ticket('status', 'we-2')));
    await settled();
    expect(next.state()).toBe('waiting');
  });

  it('refuses a request whose signal has already aborted, without queueing it', async () => {
    const budget = createAccountBudget();
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(budget.acquire(ticket('status', 'we-1'), controller.signal)).rejects.toThrow('gone');
    expect(budget.snapshot()).toMatchObject({ usedThisMinute: 0, queued: { total: 0 } });
  });

  it('removes its abort listener when the request is let through', async () => {
    const budget = createAccountBudget({ burst: 1 });
    await budget.acquire(ticket('status', 'busy'));
    const controller = new AbortController();
    const addListener = vi.spyOn(controller.signal, 'addEventListener');
    const removeListener = vi.spyOn(controller.signal, 'removeEventListener');
    const request = track(budget.acquire(ticket('status', 'we-1'), controller.signal));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(request.state()).toBe('sent');
    const [[type, listener] = []] = addListener.mock.calls;
    expect(type).toBe('abort');
    expect(removeListener).toHaveBeenCalledWith('abort', listener);
  });

  it('tells a request waiting without a signal its turn once, and withdraws it while it waits', async () => {
    const budget = createAccountBudget({ burst: 1 });
    const told: string[] = [];
    const turn = (name: string): { release(): void; refuse(error: Error): void } => ({ release: () => told.push(`${name} sent`), refuse: (error) => told.push(`${name} refused: ${error.message}`) });
    budget.wait!(ticket('status', 'we-1'), turn('first'));
    // Under the limit it goes at once, within the call.
    expect(told).toEqual(['first sent']);
    const withdrawSecond = budget.wait!(ticket('status', 'we-2'), turn('second'));
    const withdrawThird = budget.wait!(ticket('status', 'we-3'), turn('third'));
    expect(budget.snapshot().queued.total).toBe(2);
    withdrawSecond();
    expect(budget.snapshot().queued.total).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    // The third went in its turn; the second, withdrawn, was never told anything.
    expect(told).toEqual(['first sent', 'third sent']);
    // Withdrawing after the turn came changes nothing: the next request still waits its own.
    withdrawThird();
    withdrawSecond();
    budget.wait!(ticket('status', 'we-4'), turn('fourth'));
    expect(budget.snapshot().queued.total).toBe(1);
    await budget.close();
    expect(told).toEqual(['first sent', 'third sent', 'fourth refused: The request budget is closed']);
    budget.wait!(ticket('status', 'we-5'), turn('fifth'));
    expect(told.at(-1)).toBe('fifth refused: The request budget is closed');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('pauses after a 429 and resumes one request at a time', async () => {
    const budget = createAccountBudget();
    const rejected = ticket('status', 'we-0');
    await budget.acquire(rejected);
    budget.report({ ticket: rejected, httpStatus: 429, rateLimit: { remainingPerMinute: 0 } });
    expect(budget.snapshot().pausedUntil).toBe(62_000);
    const requests = Array.from({ length: 3 }, (_, index) => track(budget.acquire(ticket('status', `we-${index + 1}`))));
    await vi.advanceTimersByTimeAsync(61_999);
    expect(requests.map((request) => request.state())).toEqual(['waiting', 'waiting', 'waiting']);
    await vi.advanceTimersByTimeAsync(1);
    expect(requests.map((request) => request.state())).toEqual(['sent', 'waiting', 'waiting']);
    await vi.advanceTimersByTimeAsync(2 * PACE);
    expect(requests.map((request) => request.state())).toEqual(['sent', 'sent', 'sent']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('publishes its state on every change and replays the latest to new subscribers', async () => {
    const budget = createAccountBudget({ burst: 1 });
    const seen: BudgetState[] = [];
    const subscription = budget.state$.subscribe((state) => seen.push(state));
    await budget.acquire(ticket('status', 'we-1'));
    void budget.acquire(ticket('output', 'we-1'));
    expect(seen.map((state) => [state.usedThisMinute, state.queued.total])).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
    ]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen.at(-1)).toMatchObject({ usedThisMinute: 2, queued: { total: 0 }, cadences: { 'we-1': { lastSentAt: 0, waitMs: 0 } } });
    subscription.unsubscribe();
    let replayed: BudgetState | undefined;
    budget.state$.subscribe((state) => (replayed = state)).unsubscribe();
    expect(replayed?.usedThisMinute).toBe(2);
  });

  it('delivers states in order even when a subscriber acquires while being notified', () => {
    const budget = createAccountBudget();
    const first: number[] = [];
    const second: number[] = [];
    budget.state$.subscribe((state) => {
      first.push(state.usedThisMinute);
      if (state.usedThisMinute === 1) void budget.acquire(ticket('status', 'we-2'));
    });
    budget.state$.subscribe((state) => second.push(state.usedThisMinute));
    void budget.acquire(ticket('status', 'we-1'));
    expect(first).toEqual([0, 1, 2]);
    expect(second).toEqual([0, 1, 2]);
  });
});
