import { mkdir, writeFile } from 'node:fs/promises';
import type { ExecutionView } from '../../src/emulator/index.js';
import type { Change, Sightings } from './sightings.js';
import { type Summary, summarize } from './stats.js';

/** Detection latencies of every change of `executions`, and how many of the changes were seen at all. */
export interface Detection {
  readonly changes: number;
  readonly seen: number;
  readonly latencyMs: Summary;
}

export function detection(executions: readonly ExecutionView[], sightings: Sightings): Detection {
  return detectionOf(executions.flatMap((execution) => sightings.changes(execution)));
}

/** The same over changes gathered elsewhere, e.g. from several worlds. */
export function detectionOf(changes: readonly Change[]): Detection {
  const latencies = changes.flatMap((change) => (change.latencyMs === undefined ? [] : [change.latencyMs]));
  return { changes: changes.length, seen: latencies.length, latencyMs: summarize(latencies) };
}

/** A plain-text table: a header, a rule, one line per row; the first `textColumns` left-aligned, the numbers right-aligned. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], textColumns = 1): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column < textColumns ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ').trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/** Emulator ms as seconds with two decimals; `—` when there is nothing to show. */
export const seconds = (ms: number | null): string => (ms === null ? '—' : (ms / 1000).toFixed(2));

export const times = (value: number | null): string => (value === null ? '—' : `${value.toFixed(2)}×`);

/** Writes `bench/results/<name>.json`. */
export async function writeResults(name: string, results: unknown): Promise<string> {
  const directory = new URL('../results/', import.meta.url);
  await mkdir(directory, { recursive: true });
  const file = new URL(`${name}.json`, directory);
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  return file.pathname;
}
