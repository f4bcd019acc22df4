import { isAuthenticationError, isFlowstreamError, isNetworkError, isNotFoundError, isRunTimeoutError, isTimeoutError } from '../index.js';
import { terminalText } from './format/terminal-text.js';

/**
 * What the user reads on stderr when a command fails: the error's message and, where it helps, what
 * to check or how to pick the execution up again. Never the API key (the library keeps it out).
 */
export function describeError(error: unknown): readonly string[] {
  const message = error instanceof Error ? error.message : String(error);
  // The message can carry the server's own text (service.md §1.3).
  const lines = [`Error: ${terminalText(message, { multiline: true })}`];
  if (isAuthenticationError(error)) lines.push('Check FLOWSTREAM_API_KEY (or --api-key): the service did not accept it.');
  if (isNetworkError(error) || isTimeoutError(error)) lines.push('Check FLOWSTREAM_BASE_URL (or --base-url) and your connection.');
  if (isRunTimeoutError(error)) {
    // The run was aborted: nothing is left running, and --timeout was given in seconds.
    return [`Error: The run did not finish within --timeout ${formatSeconds(error.timeoutMs)}${error.executionId === undefined ? '' : `; execution ${error.executionId} was aborted`}.`];
  }
  if (isNotFoundError(error)) {
    lines.push(error.endpoint === 'run' || error.endpoint === 'detail' ? 'Check the workflow id: `flowstream search` lists them.' : 'Check the execution id: it is printed when a run starts (we-…).');
    return lines;
  }
  if (isFlowstreamError(error) && error.executionId !== undefined) {
    lines.push(`Execution ${error.executionId} may still be running: flowstream watch ${error.executionId}`);
  }
  return lines;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1)} s`;
}
