import {
  isAuthenticationError,
  isFlowstreamError,
  isNetworkError,
  isNotFoundError,
  isRunTimeoutError,
  isStartInDoubtError,
  isTimeoutError,
  type NetworkError,
  type NotFoundError,
} from '../index.js';
import { terminalText } from './format/terminal-text.js';

/** What the failed command was about, as the user gave it: the hints name it. */
export interface ErrorSubject {
  readonly canvasId?: string;
  readonly executionId?: string;
  /** The API base URL the command used (shown without credentials, query or fragment). */
  readonly baseUrl?: string;
}

const CHECK_BASE_URL = 'Check FLOWSTREAM_BASE_URL (or --base-url) and your connection.';

/**
 * Causes of a failed connection that come before a request is written: the address did not resolve,
 * could not be reached, or refused the connection. Nothing reached the service.
 */
const NOTHING_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/** How many causes deep the reason of a network error is looked for (fetch wraps the socket's error). */
const MAX_CAUSE_DEPTH = 6;

/**
 * The base URL as it may be shown: a URL can carry credentials (`https://user:secret@host/v1`) or a
 * key in its query, so only its scheme, host and path are kept, and anything shaped like an API key
 * (service.md §1.5) is masked.
 */
export function displayedUrl(baseUrl: string | undefined): string {
  if (baseUrl === undefined || !URL.canParse(baseUrl)) return 'the API base URL';
  const url = new URL(baseUrl);
  return terminalText(`${url.protocol}//${url.host}${url.pathname}`.replace(/rf_[A-Za-z0-9]+/gu, 'rf_…'));
}

/**
 * Why a connection failed, from the error's causes: the first system or fetch error code
 * (`ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_SOCKET`…), else the innermost cause's message.
 */
export function networkCause(error: Error): string | undefined {
  let message: string | undefined;
  let cause: unknown = error.cause;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof cause === 'object' && cause !== null; depth += 1) {
    if ('code' in cause && typeof cause.code === 'string' && cause.code !== '') return cause.code;
    if ('message' in cause && typeof cause.message === 'string' && cause.message !== '') message = cause.message;
    cause = 'cause' in cause ? cause.cause : undefined;
  }
  return message === undefined ? undefined : terminalText(message);
}

function networkLines(error: NetworkError, about: ErrorSubject): string[] {
  const cause = networkCause(error);
  const url = displayedUrl(about.baseUrl);
  if (cause !== undefined && NOTHING_SENT.has(cause)) {
    const consequence = error.endpoint === 'run' ? 'nothing was sent, so no execution was started' : 'nothing was sent';
    return [`Error: Could not connect to ${url} (${cause}) for ${error.endpoint}: ${consequence}.`, CHECK_BASE_URL];
  }
  // The request may have been written before the connection broke: a start may have reached the service (service.md §2.2).
  const started = error.mayHaveStarted ? ': the execution may have started on the service, so the start was not retried' : '';
  return [`Error: The connection to ${url} failed during ${error.endpoint} (${cause ?? 'no cause given'})${started}.`, CHECK_BASE_URL];
}

function notFoundLines(error: NotFoundError, about: ErrorSubject): string[] {
  // The service's "not found" of a canvas or execution is a business error with its code (service.md
  // §1.2), under HTTP 200 or, from a spec-faithful server, 404. A bare 404 is the framework's answer
  // to a path it has no route for (§1.3): the base URL is wrong, not the id.
  if (error.errCode === undefined && error.status === 404) {
    const said = error.errMsg === undefined ? '' : `: ${terminalText(error.errMsg)}`;
    return [
      `Error: The API base URL looks wrong: ${displayedUrl(about.baseUrl)} has no ${error.endpoint} endpoint (HTTP 404${said}).`,
      'Check FLOWSTREAM_BASE_URL (or --base-url): it is the address of the API, ending in /v1 (e.g. https://host/v1).',
    ];
  }
  const code = error.errCode === undefined ? `HTTP ${error.status}` : error.errCode;
  switch (error.endpoint) {
    case 'run':
    case 'detail':
      return [
        `Error: The workflow ${about.canvasId === undefined ? '' : `${terminalText(about.canvasId)} `}was not found (${code}).`,
        'Check the workflow id: `flowstream search` lists them.',
      ];
    case 'status':
    case 'output':
    case 'abort': {
      const executionId = error.executionId ?? about.executionId;
      return [
        `Error: The execution ${executionId === undefined ? '' : `${terminalText(executionId)} `}was not found (${code}).`,
        'Check the execution id: it is printed when a run starts (we-…).',
      ];
    }
    case 'search':
    case 'upload':
    case 'copilot':
      return [`Error: ${terminalText(error.message, { multiline: true })}`];
    default:
      return error.endpoint satisfies never;
  }
}

/**
 * What the user reads on stderr when a command fails: what went wrong, in the terms of the command
 * (the workflow, the execution, the base URL), and what to check or how to pick the execution up
 * again. Never the API key (the library keeps it out of its errors; URLs are shown without credentials).
 */
export function describeError(error: unknown, about: ErrorSubject = {}): readonly string[] {
  if (isRunTimeoutError(error)) {
    // The run was aborted: nothing is left running, and --timeout was given in seconds.
    return [`Error: The run did not finish within --timeout ${formatSeconds(error.timeoutMs)}${error.executionId === undefined ? '' : `; execution ${error.executionId} was aborted`}.`];
  }
  if (isNotFoundError(error)) return notFoundLines(error, about);
  if (isStartInDoubtError(error)) {
    return [
      `Error: A run with --idempotency-key ${terminalText(error.key)} was started at ${new Date(error.claimedAt).toISOString()}, but its answer was lost: the execution may exist and be running.`,
      'Nothing was started again. Look for it on the service before you run it with another key; this key starts nothing until its --idempotency-ttl has passed.',
    ];
  }
  const message = error instanceof Error ? error.message : String(error);
  // The message can carry the server's own text (service.md §1.3).
  const lines = isNetworkError(error) ? networkLines(error, about) : [`Error: ${terminalText(message, { multiline: true })}`];
  if (isAuthenticationError(error)) lines.push('Check FLOWSTREAM_API_KEY (or --api-key): the service did not accept it.');
  if (isTimeoutError(error)) lines.push(CHECK_BASE_URL);
  if (isFlowstreamError(error) && error.executionId !== undefined) {
    lines.push(`Execution ${error.executionId} may still be running: flowstream watch ${error.executionId} follows it, flowstream abort ${error.executionId} stops it`);
  }
  return lines;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1)} s`;
}
