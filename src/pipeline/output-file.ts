import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { OutputFile, RunResult } from '../domain/model.js';

/**
 * The output file of a run with this name (or the first whose name passes `match`). The order of
 * files is unspecified (service.md §4.6), so files are picked by name, never by position. Throws
 * `InvalidArgumentError` when the run produced no such file.
 *
 * @example
 * ```ts
 * const report = outputFile(result, 'report.md');
 * const image = outputFile(result, (name) => name.endsWith('.png'));
 * ```
 */
export function outputFile(result: RunResult, match: string | ((name: string) => boolean)): OutputFile {
  const test = typeof match === 'string' ? (name: string) => name === match : match;
  const file = result.files.find((candidate) => test(candidate.name));
  if (file === undefined) {
    const wanted = typeof match === 'string' ? `"${match}"` : 'matching';
    throw new InvalidArgumentError('file', `no ${wanted} output file in execution ${result.executionId} (it has ${result.files.map((f) => f.name).join(', ') || 'none'})`);
  }
  return file;
}
