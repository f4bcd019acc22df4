import { expect, it } from 'vitest';
import { describeSoak, runFaultSoak } from './fault-soak.js';
import { activeResources, expectBackTo, expectSoakHeld } from './expect-soak-held.js';

/**
 * The fault soak's control: the same harness as the fault soak (fault-soak.outages.integration.test.ts), with
 * no outage. It proves the harness and its accounting: with nothing failing, every promise it checks
 * holds on the client, so a broken promise under outages is the client's, not the harness's.
 */
it(
  'with no outage, 20 runs on a Redis budget, some left at random, each end finished or aborted exactly once, with no 429, no unhandled error, a flat heap and nothing left open',
  { timeout: 120_000 },
  async () => {
    const baseline = activeResources();
    const report = await runFaultSoak({ seed: 11, runs: 20, speed: 40, arrivalMs: 2 * 60_000, faultsForMs: 0 });
    console.info(describeSoak(report));
    expect(report.schedule).toEqual([]);
    expectSoakHeld(report);
    // Every run is accounted for: the left ones that had started an execution, and the others.
    expect(report.audit.endings.finished + report.audit.endings.left).toBe(20);
    expect(report.audit.executions).toBe(report.audit.endings.finished + report.audit.aborts.answered);
    await expectBackTo(baseline);
  },
);
