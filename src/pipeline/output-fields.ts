import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { RunResult, VariableValue, Variables } from '../domain/model.js';
import { outputText, type OutputTextOptions } from './output-text.js';

function isRecord(value: unknown): value is Readonly<Record<string, VariableValue>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Chosen fields of a step whose answer is a JSON object (see {@link outputText} for which text is
 * read), as variables of the next run. A field the answer lacks is left out, so that a required
 * variable of the next workflow shows up missing rather than as the text `undefined`. Throws
 * `InvalidArgumentError` when the text is not a JSON object.
 *
 * @example
 * ```ts
 * thenRun(client, 'c-mail', (result) => ({ variables: outputFields(result, ['subject', 'audience']) }));
 * ```
 */
export function outputFields(result: RunResult, fields: readonly string[], options: OutputTextOptions = {}): Variables {
  const text = outputText(result, options);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('output', `of execution ${result.executionId} is not JSON`);
  }
  if (!isRecord(parsed)) throw new InvalidArgumentError('output', `of execution ${result.executionId} is not a JSON object`);
  const picked: Record<string, VariableValue> = {};
  for (const field of fields) {
    const value = parsed[field];
    if (value !== undefined) picked[field] = value;
  }
  return picked;
}
