/**
 * The fleet matrix: 4 and 8 processes of 5, 10, 20 and 50 runs on one account with the service's limits,
 * each a child process with its own client, all on one Redis budget (a real redis-server), against the
 * emulator; each fleet as it is, with a process joining late, and with one killed -9 mid-run; on an
 * accelerated clock and in real time. Per cell: the per-run mean status-read interval in the steady
 * span, its spread across processes and across runs (the aim: within ×1.3), the account's rate used
 * while runs wait (the aim: ≥ 85%), and 429s (the aim: none).
 *
 * Alone: `npx tsx bench/fleet.ts [--clock accelerated|real|both] [--processes 4,8] [--variants as-is,late,kill]
 * [--results fleet]` (default both clocks, 4 and 8 processes, every variant, bench/results/fleet.json; the
 * real-time cells take 5 to 7 minutes each).
 */
import { parseArgs } from 'node:util';
import { missedAims } from '../test/redis/fleet-figures.js';
import { type FleetOutcome, type FleetScenario, runFleet } from '../test/redis/fleet-harness.js';
import { startRedisServer } from '../test/redis/redis-server.js';
import { seconds, table, times, writeResults } from './harness/report.js';

const SIZES: Readonly<Record<number, readonly number[]>> = { 4: [5, 10, 20, 50], 8: [5, 10, 20, 50, 5, 10, 20, 50] };
/** Emulator ms per real ms on the accelerated clock. */
const SPEED = 15;
const VARIANTS = ['as is', 'one joins late', 'one killed -9'] as const;
type Variant = (typeof VARIANTS)[number];
type ClockKind = 'accelerated' | 'real';

export interface FleetCell {
  readonly processes: number;
  readonly variant: Variant;
  readonly clock: ClockKind;
  readonly scenario: FleetScenario;
  /** Absent when the cell did not run to its end: `error` says why. */
  readonly outcome?: FleetOutcome;
  readonly error?: string;
}

/**
 * The scenario of one cell. The account's minute is the service's (100 requests); its day is 100,000,
 * so that the day's burst (about 950 requests at the service's 10,000) does not end the minute's pace
 * before the fleet is measured. The runs work long enough for every run to be read a few times after
 * the last start (and after a killed process's share has gone to the others): the start phase and a
 * read interval both grow with the fleet, about 0.7 s per run.
 */
export function scenarioOf(processes: number, variant: Variant, clock: ClockKind): FleetScenario {
  const sizes = SIZES[processes] ?? Array.from({ length: processes }, (_, index) => [5, 10, 20, 50][index % 4]!);
  const runs = sizes.reduce((sum, count) => sum + count, 0);
  const base = { processes: sizes, perDay: 100_000, ...(clock === 'accelerated' ? { speed: SPEED } : {}) };
  // The start phase, then four read intervals.
  const workMs = Math.ceil((5 * 750 * runs) / 60_000) * 60_000;
  switch (variant) {
    case 'as is':
      return { ...base, workMs };
    case 'one joins late':
      return { ...base, joinLate: { runs: 20, afterMs: 20_000 }, workMs: workMs + 60_000 };
    case 'one killed -9':
      // The process of 20 runs, once they have all started; its share goes to the others once it has
      // missed two of its turns (a few seconds), long before its lease (2 minutes) runs out.
      return { ...base, kill: { process: 2, afterMs: 10_000 }, workMs: workMs + 60_000 };
  }
}

export async function fleetMatrix(options: { readonly clocks: readonly ClockKind[]; readonly processes: readonly number[]; readonly variants?: readonly Variant[] }): Promise<{ readonly cells: readonly FleetCell[] }> {
  const server = await startRedisServer();
  try {
    const cells: FleetCell[] = [];
    for (const clock of options.clocks)
      for (const processes of options.processes)
        for (const variant of options.variants ?? VARIANTS) {
          const scenario = scenarioOf(processes, variant, clock);
          try {
            const outcome = await runFleet(scenario, server.socket);
            cells.push({ processes, variant, clock, scenario, outcome });
            console.error(`fleet: ${clock} ${processes} ${variant}: ${(outcome.realMs / 1000).toFixed(0)} s`);
          } catch (error) {
            const message = String(error).split('\n')[0] ?? '';
            cells.push({ processes, variant, clock, scenario, error: message });
            console.error(`fleet: ${clock} ${processes} ${variant}: ${message}`);
          }
        }
    return { cells };
  } finally {
    await server.close();
  }
}

export const FLEET_TITLE = `A fleet on one account: processes of 5, 10, 20 and 50 runs, each a child process of its own on one Redis budget; emulator ${SPEED}× real time or real time; times in emulator seconds`;

function percent(value: number): string {
  return `${(value * 100).toFixed(0)}%`;
}

const meanOf = (values: readonly number[]): number | null => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);

export function fleetMatrixTable(cells: readonly FleetCell[]): string {
  const failed = cells.flatMap(({ clock, processes, variant, error }) => (error === undefined ? [] : [`\nnot run to its end: ${clock} ${processes} ${variant}: ${error}`]));
  return table(
    ['clock', 'processes', 'variant', 'runs', 'failed', 'start phase (s)', 'reads while starting', 'steady span (s)', 'mean status interval (s)', 'spread of processes', 'spread of runs', 'utilisation', '429s', 'busiest minute', 'survivors exited 0', 'killed read after', 'aims'],
    cells.flatMap(({ clock, processes, variant, outcome }) => outcome === undefined ? [] : [[
      clock === 'accelerated' ? `${SPEED}×` : 'real',
      String(processes),
      variant,
      String(outcome.runs),
      String(outcome.failedRuns),
      seconds(outcome.startPhaseMs),
      String(outcome.readsWhileStarting),
      `${seconds(outcome.steadyMs.from)}–${seconds(outcome.steadyMs.to)}`,
      seconds(meanOf(outcome.figures.runIntervalsMs.flat())),
      times(outcome.figures.processSpread),
      times(outcome.figures.runSpread),
      percent(outcome.figures.utilisation),
      String(outcome.figures.rateLimited),
      String(outcome.busiestMinute),
      `${outcome.exitCodes.filter((code) => code === 0).length}/${outcome.exitCodes.length}`,
      outcome.readsOfKilledAfterKill === undefined ? '—' : String(outcome.readsOfKilledAfterKill),
      missedAims(outcome.figures).join(', ') || 'met',
    ]]),
    3,
  ) + failed.join('');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { clock: { type: 'string', default: 'both' }, processes: { type: 'string', default: '4,8' }, variants: { type: 'string', default: 'as-is,late,kill' }, results: { type: 'string', default: 'fleet' } } });
  const clocks: ClockKind[] = values.clock === 'both' ? ['accelerated', 'real'] : [values.clock === 'real' ? 'real' : 'accelerated'];
  const byName: Readonly<Record<string, Variant>> = { 'as-is': 'as is', late: 'one joins late', kill: 'one killed -9' };
  const variants = values.variants.split(',').flatMap((name) => byName[name] ?? []);
  const matrix = await fleetMatrix({ clocks, processes: values.processes.split(',').map(Number), variants });
  console.log(`\n${FLEET_TITLE}\n`);
  console.log(fleetMatrixTable(matrix.cells));
  console.log(`→ ${await writeResults(values.results, matrix)}`);
  // Alone, the matrix is a check: a cell that missed an aim, or did not run to its end, fails it.
  if (matrix.cells.some((cell) => cell.outcome === undefined || missedAims(cell.outcome.figures).length > 0)) process.exitCode = 1;
}
