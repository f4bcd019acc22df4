/**
 * The release's fault soak at full size: 1,000 runs, 30 % of them left at random by their
 * subscribers, while the service (the emulator on 127.0.0.1) and Redis fail and recover at random —
 * 503s, dropped connections, late answers, Redis frozen (SIGSTOP) and killed (kill -9, restarted
 * empty) — from one seed (test/soak/fault-soak.ts). The client is a process of its own, on a Redis
 * budget, with its garbage collector exposed. Alone: `npx tsx bench/fault-soak.ts`.
 */
import { pathToFileURL } from 'node:url';
import { describeSoak, runFaultSoak, type FaultSoakOptions, type FaultSoakReport } from '../test/soak/fault-soak.js';
import { violationLists } from '../test/soak/soak-audit.js';
import { table, writeResults } from './harness/report.js';

/**
 * 1,000 runs arriving over 90 emulator minutes (the account's 100 requests a minute carry about 13
 * runs a minute of this workflow), outages all along, at 30× real time: about 4 minutes of real time
 * when the client follows every run through.
 */
export const FAULT_SOAK: FaultSoakOptions = { seed: 1, runs: 1_000, speed: 30, arrivalMs: 90 * 60_000, faultsForMs: 90 * 60_000, warmupRuns: 100 };

/** The soak's promises, each with how many times it broke, under outages and in the control; then the other figures. */
export function faultSoakTable(faulted: FaultSoakReport, control: FaultSoakReport): string {
  const heap = ({ client }: FaultSoakReport): string => (client === undefined ? '—' : `${(client.heapWarmBytes / 1e6).toFixed(1)} → ${(client.heapEndBytes / 1e6).toFixed(1)}`);
  const controlLists = new Map(violationLists(control.audit.violations));
  const rows: string[][] = [
    ...violationLists(faulted.audit.violations).map(([name, list]) => [name, String(list.length), String(controlLists.get(name)?.length)]),
    ['429s from the service', String(faulted.requests.rateLimited), String(control.requests.rateLimited)],
    ['unhandled rejections or exceptions (client)', String(faulted.client?.unhandled.length ?? 'no report'), String(control.client?.unhandled.length ?? 'no report')],
    ['client exited by itself', String(faulted.clientExited), String(control.clientExited)],
    ['heap after the warm-up batch → at the end (MB)', heap(faulted), heap(control)],
  ];
  return table(['promise (count broken, aim 0)', 'with outages', 'control: none'], rows);
}

/** The soak with outages, then its control: the same runs (same seed) with none. */
export async function faultSoakBench(options: FaultSoakOptions = FAULT_SOAK): Promise<{ readonly faulted: FaultSoakReport; readonly control: FaultSoakReport }> {
  const faulted = await runFaultSoak(options);
  const control = await runFaultSoak({ ...options, faultsForMs: 0 });
  console.log(`\nThe fault soak: ${String(options.runs)} runs, some left at random, while the service and Redis fail and recover at random (seed ${String(options.seed)}), and its control without outages; emulator ${String(options.speed)}× real time\n`);
  console.log(`${describeSoak(faulted)}\ncontrol: ${describeSoak(control)}`);
  console.log(`\n${faultSoakTable(faulted, control)}`);
  console.log(`→ ${await writeResults('fault-soak', { options, faulted, control })}`);
  return { faulted, control };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) await faultSoakBench();
