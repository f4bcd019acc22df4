import { expect } from 'vitest';
import type { FaultSoakReport } from './fault-soak.js';
import { NO_VIOLATIONS } from './soak-audit.js';

/** The most the client's heap may grow from the warm-up batch to the end: it must stay flat. */
export const HEAP_GROWTH_BOUND = 1.2;

/**
 * Every promise of the fault soak, asserted on its report: each execution ended exactly once, finished
 * or aborted as its run asked (soak-audit.ts), with none started twice or left running; no 429 from
 * the service; no unhandled rejection or uncaught exception in the client; its heap flat; and the
 * client idle at the end and gone by itself once its budget closed (nothing left open). Each is a soft
 * assertion: a failing soak reports every promise it broke.
 */
export function expectSoakHeld(report: FaultSoakReport): void {
  const { audit, client } = report;
  // Soft: a soak that fails says every promise it broke, not only the first.
  expect.soft({ exited: report.clientExited, code: report.clientExitCode, stderr: report.clientStderr }).toEqual({ exited: true, code: 0, stderr: '' });
  expect.soft(client).toBeDefined();
  expect.soft(audit.violations).toEqual(NO_VIOLATIONS);
  expect.soft(report.requests.rateLimited).toBe(0);
  expect.soft(client?.unhandled).toEqual([]);
  expect.soft(client?.idleAtEnd).toBe(true);
  expect.soft(client?.heapEndBytes).toBeLessThanOrEqual((client?.heapWarmBytes ?? 0) * HEAP_GROWTH_BOUND);
  // The soak did what it is for: runs followed to the end, and runs left.
  expect.soft(audit.endings.finished).toBeGreaterThan(0);
  expect.soft(audit.endings.left).toBeGreaterThan(0);
  expect.soft(audit.aborts.answered).toBeGreaterThan(0);
}

/** This process's active resources (timers, sockets, servers, child processes, …) counted by kind. */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * That the soak's side (emulator, redis-server, the client's process, the outages' timers) left none
 * of its resources open: the loop turns, without timers, a bounded number of times for closings under way.
 */
export async function expectBackTo(baseline: ReadonlyMap<string, number>): Promise<void> {
  const grown = (): [string, number][] => [...activeResources()].filter(([kind, count]) => count > (baseline.get(kind) ?? 0));
  for (let turn = 0; turn < 1_000 && grown().length > 0; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  expect.soft(Object.fromEntries(grown())).toEqual({});
}
