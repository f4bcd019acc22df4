/**
 * A mistake in how the command was called (a missing argument, a bad flag value, no API key): the
 * user fixes the command line, nothing was sent. Exits with code 2.
 *
 * @example
 * ```ts
 * throw new UsageError('--timeout must be a positive number of seconds (got "soon")');
 * ```
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * True for a `UsageError`, also one from another copy of this module.
 *
 * @example
 * ```ts
 * if (isUsageError(error)) process.exitCode = 2;
 * ```
 */
export function isUsageError(error: unknown): error is UsageError {
  return error instanceof Error && error.name === 'UsageError';
}
