import { InvalidArgumentError, shownType } from '../errors/validation-errors.js';

/** The name an upload source is given: a non-empty string, or an `InvalidArgumentError` naming `argument`. */
export function fileName(argument: string, name: unknown): string {
  if (typeof name !== 'string') throw new InvalidArgumentError(argument, `must be the file's name, a string (got ${shownType(name)})`);
  if (name === '') throw new InvalidArgumentError(argument, 'must not be empty');
  return name;
}
