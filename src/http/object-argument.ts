import { InvalidArgumentError } from '../errors/validation-errors.js';

/**
 * An optional object argument (options, a query, a run's input): absent is `{}`; anything but a plain
 * object — `null` above all, which JavaScript's default parameters let through — is an
 * `InvalidArgumentError` naming the argument, not a TypeError from deep inside the call.
 */
export function objectArgument<T extends object>(argument: string, value: T | undefined): T | Partial<T> {
  if (value === undefined) return {};
  const given: unknown = value;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new InvalidArgumentError(argument, `must be an object or left out (got ${given === null ? 'null' : Array.isArray(given) ? 'an array' : typeof given})`);
  }
  return value;
}
