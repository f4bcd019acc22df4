import { describe, expect, it } from 'vitest';
import { createAccountBudget } from '../../src/budget/index.js';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';

describe('the budget tells the runs its headroom (when the budget is loose, runs poll faster)', () => {
  it('offers the runs more pace while the day bucket is full than once they have spent it', async () => {
    const budget = createAccountBudget({ scheduler: clockScheduler(createManualClock()), requestsPerMinute: 1_000, requestsPerDay: 1_000, dayBurst: 0.06, burst: 100 });
    const fresh = budget.pollHeadroom?.();
    expect(fresh?.activeRuns).toBe(0);
    const sustainable = budget.snapshot().day.sustainablePerMinute;
    expect(fresh!.readsPerMinute).toBeGreaterThan(sustainable);
    for (let index = 0; index < 50; index += 1) {
      const ticket = { endpoint: 'status', priority: 'status', key: `we-${index % 5}` } as const;
      await budget.acquire(ticket);
      budget.report({ ticket, httpStatus: 200, rateLimit: {} });
    }
    const spent = budget.pollHeadroom?.();
    // Five runs polled; what the bucket has left is less, and so is the pace offered to them.
    expect(spent?.activeRuns).toBe(5);
    expect(spent!.readsPerMinute).toBeLessThan(fresh!.readsPerMinute);
    await budget.close();
  });
});
