/**
 * A mistake in how the command was called (a missing argument, a bad flag value, no API key): the
 * user fixes the command line, nothing was sent. Exits with code 2.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** True for a `UsageError`, also one from another copy of this module. */
export function isUsageError(error: unknown): error is UsageError {
  return error instanceof Error && error.name === 'UsageError';
}
