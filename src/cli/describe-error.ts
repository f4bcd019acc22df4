import { isAuthenticationError, isFlowstreamError, isNetworkError, isTimeoutError } from '../index.js';

/**
 * What the user reads on stderr when a command fails: the error's message and, where it helps, what
 * to check or how to pick the execution up again. Never the API key (the library keeps it out).
 *
 * @example
 * ```ts
 * process.stderr.write(`${describeError(error).join('\n')}\n`);
 * ```
 */
export function describeError(error: unknown): readonly string[] {
  const message = error instanceof Error ? error.message : String(error);
  const lines = [`Error: ${message}`];
  if (isAuthenticationError(error)) lines.push('Check FLOWSTREAM_API_KEY (or --api-key): the service did not accept it.');
  if (isNetworkError(error) || isTimeoutError(error)) lines.push('Check FLOWSTREAM_BASE_URL (or --base-url) and your connection.');
  if (isFlowstreamError(error) && error.executionId !== undefined) {
    lines.push(`Execution ${error.executionId} may still be running: flowstream watch ${error.executionId}`);
  }
  return lines;
}
