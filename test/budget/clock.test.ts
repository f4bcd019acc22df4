import { InvalidArgumentError } from '../../src/errors/validation-errors.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRequestBudget, scaledClock, systemClock } from '../../src/budget/index.js';
import { ticket } from './simulation.js';

describe('budget clocks', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads the monotonic performance clock by default', () => {
    const start = systemClock.now();
    vi.advanceTimersByTime(1_234);
    expect(systemClock.now() - start).toBe(1_234);
  });

  it('runs a budget at an accelerated emulator\'s pace: its minute lasts a second at 60×', async () => {
    const budget = createRequestBudget({ clock: scaledClock(60), requestsPerMinute: 10, burst: 1, latencyAllowanceMs: 0 });
    let sent = 0;
    for (let index = 0; index < 3; index++) void budget.acquire(ticket('status', `we-${index}`)).then(() => (sent += 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toBe(1);
    // One request per 6 emulated seconds: 100 real milliseconds.
    await vi.advanceTimersByTimeAsync(100);
    expect(sent).toBe(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(sent).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('refuses a speed that is not a positive number', () => {
    expect(() => scaledClock(0)).toThrow(InvalidArgumentError);
    expect(() => scaledClock(Number.NaN)).toThrow(/speed/);
  });
});
