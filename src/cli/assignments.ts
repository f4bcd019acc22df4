import { UsageError } from './usage-error.js';

/** One `name=value` of `--var` or `--file`. */
export interface Assignment {
  readonly name: string;
  readonly value: string;
}

/**
 * Splits `name=value` at the first `=` (values may contain more). The flag and the form it takes
 * (`name=value`, `name=path`) name the option in the error message.
 */
export function parseAssignment(text: string, flag: string, form = 'name=value'): Assignment {
  const at = text.indexOf('=');
  const name = at < 0 ? '' : text.slice(0, at).trim();
  if (name === '') throw new UsageError(`${flag} expects ${form} (got "${text}")`);
  return { name, value: text.slice(at + 1) };
}

/** Commander's accumulator for repeatable `name=value` options. */
export function collectAssignment(flag: string, form = 'name=value'): (text: string, previous: readonly Assignment[]) => readonly Assignment[] {
  return (text, previous) => [...previous, parseAssignment(text, flag, form)];
}
