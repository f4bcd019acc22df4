import { describe, expect, it } from 'vitest';
import { relayBench, relayBenchTable } from '../../bench/relay.js';

// A smoke test of the relay table at its smallest: the viewers connect over real HTTP from a child
// process, every event reaches them, and the figures add up. It asserts no timings.
describe('npm run bench: the relay table, at its smallest', () => {
  it('follows two executions for six viewers through the relay, with as many reads as two plain watches, every figure present', { timeout: 60_000 }, async () => {
    const results = await relayBench({ viewers: 6, executions: 2, children: 1, nodeMs: 2_000 });
    expect(results.requests.plainWatches).toBeGreaterThan(0);
    // One follow per execution however many viewers: the relay reads as the plain watches do.
    expect(Math.abs(results.requests.relay - results.requests.plainWatches)).toBeLessThanOrEqual(Math.max(2, results.requests.plainWatches * 0.1));
    expect(results.delayMs.count).toBeGreaterThan(10);
    expect(results.untimedEvents).toBeLessThan(results.delayMs.count);
    expect(results.delayMs.p50!).toBeLessThanOrEqual(results.delayMs.p99!);
    expect(Number.isFinite(results.heapPerViewerBytes)).toBe(true);
    expect(relayBenchTable(results).split('\n')).toHaveLength(10);
  });
});
