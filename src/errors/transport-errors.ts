import type { Endpoint } from '../domain/endpoints.js';
import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * Where a request failed before an answer came back.
 *
 * @example
 * ```ts
 * new NetworkError({ endpoint: 'status', executionId: 'we-1', cause: fetchError });
 * ```
 */
export interface TransportErrorDetails {
  readonly endpoint: Endpoint;
  readonly executionId?: string | undefined;
  readonly cause?: unknown;
}

/**
 * A start that failed this way may have reached the server (service.md §2.2): flowstream never sends
 * it again, and says so, because a second start would run the workflow twice.
 */
function mayHaveStarted(endpoint: Endpoint): boolean {
  return endpoint === 'run';
}

/**
 * Failures of the connection itself, before a byte of the request could leave: refused, no route, no
 * such host, or the connect step timing out (Node's and undici's codes). A browser's fetch names no
 * cause, so there a failed start is always taken as one that may have started.
 */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Whether `cause` shows the connection was never made: a code of {@link NEVER_CONNECTED} on the error
 * fetch threw, on its `cause` chain, or on every error of an `AggregateError` (Node tries each address
 * of a host in turn). Bounded: a cause chain is followed at most 8 deep.
 */
function neverConnected(cause: unknown, depth = 0): boolean {
  if (typeof cause !== 'object' || cause === null || depth > 8) return false;
  const { code } = cause as { readonly code?: unknown };
  if (typeof code === 'string' && NEVER_CONNECTED.has(code)) return true;
  if (cause instanceof AggregateError && cause.errors.length > 0) return cause.errors.every((error) => neverConnected(error, depth + 1));
  return neverConnected((cause as { readonly cause?: unknown }).cause, depth + 1);
}

const MAY_HAVE_STARTED = '; the execution may have started on the service, so the start was not retried';

/**
 * What the failures of a call without a usable answer share (none came, too late, too large, a
 * redirect, or one that does not read): the endpoint, and whether a start may have reached the
 * service, which the message then says too.
 */
export abstract class CallFailure extends FlowstreamError {
  readonly endpoint: Endpoint;
  readonly mayHaveStarted: boolean;

  constructor(what: string, code: string, details: TransportErrorDetails, started = mayHaveStarted(details.endpoint)) {
    super(`${what}${started ? MAY_HAVE_STARTED : ''}`, code, details);
    this.endpoint = details.endpoint;
    this.mayHaveStarted = started;
  }
}

/**
 * No answer came: the connection was refused or dropped, DNS failed, or the body could not be read.
 * `mayHaveStarted` is true for a start (see {@link ServerError}), except when the connection was never
 * made (refused, host not found, no route): then nothing reached the service, and a start can be made again.
 *
 * @example
 * ```ts
 * if (isNetworkError(e) && !e.mayHaveStarted) retryLater();
 * ```
 */
export class NetworkError extends CallFailure {
  static override readonly kind: string = 'NetworkError';

  /**
   * Whether the connection to the service was made. False when it was refused, the host was not
   * found or there was no route: the request reached nothing, so even a start may be made again.
   */
  readonly connected: boolean;

  constructor(details: TransportErrorDetails) {
    const connected = !neverConnected(details.cause);
    super(`Network error on ${details.endpoint}`, 'NETWORK_ERROR', details, mayHaveStarted(details.endpoint) && connected);
    this.connected = connected;
  }
}

/**
 * The answer did not come within the endpoint's timeout (`ClientOptions.timeoutMs`).
 * `mayHaveStarted` is true for a start.
 *
 * @example
 * ```ts
 * if (isTimeoutError(e)) console.log(`${e.endpoint} took over ${e.timeoutMs} ms`);
 * ```
 */
export class TimeoutError extends CallFailure {
  static override readonly kind: string = 'TimeoutError';

  readonly timeoutMs: number;

  constructor(details: TransportErrorDetails & { readonly timeoutMs: number }) {
    super(`${details.endpoint} timed out after ${details.timeoutMs} ms`, 'TIMEOUT', details);
    this.timeoutMs = details.timeoutMs;
  }
}

/**
 * True for a {@link NetworkError} from any realm.
 *
 * @example
 * ```ts
 * if (isNetworkError(error)) console.log(error.endpoint);
 * ```
 */
export const isNetworkError = /* @__PURE__ */ guardFor(NetworkError);

/**
 * True for a {@link TimeoutError} from any realm.
 *
 * @example
 * ```ts
 * if (isTimeoutError(error)) console.log(error.timeoutMs);
 * ```
 */
export const isTimeoutError = /* @__PURE__ */ guardFor(TimeoutError);

/**
 * An API answer larger than `maxResponseBytes` once decoded: cut off unread, so that a hostile or
 * broken server (a gzip body inflating to gigabytes) cannot fill the memory. Not retried.
 *
 * @example
 * ```ts
 * if (isResponseTooLargeError(e)) console.warn(`the answer passed ${e.maxBytes} bytes`);
 * ```
 */
export class ResponseTooLargeError extends CallFailure {
  static override readonly kind: string = 'ResponseTooLargeError';

  readonly maxBytes: number;

  constructor(details: TransportErrorDetails & { readonly maxBytes: number }) {
    super(`The answer to ${details.endpoint} is larger than ${details.maxBytes} bytes (maxResponseBytes)`, 'RESPONSE_TOO_LARGE', details);
    this.maxBytes = details.maxBytes;
  }
}

/**
 * True for a {@link ResponseTooLargeError} from any realm.
 *
 * @example
 * ```ts
 * if (isResponseTooLargeError(error)) console.log(error.maxBytes);
 * ```
 */
export const isResponseTooLargeError = /* @__PURE__ */ guardFor(ResponseTooLargeError);

/**
 * The API answered with a redirect. API calls never follow one: following would send the custom
 * headers to another origin and turn a POST start into a GET whose answer is taken for the start.
 * `location` is where it pointed (empty when a browser hides it).
 *
 * @example
 * ```ts
 * if (isRedirectError(e)) console.error(`the API base URL redirects to ${e.location}: fix baseUrl`);
 * ```
 */
export class RedirectError extends CallFailure {
  static override readonly kind: string = 'RedirectError';

  readonly status: number;
  readonly location: string;

  constructor(details: TransportErrorDetails & { readonly status: number; readonly location: string }) {
    const to = details.location === '' ? '' : ` to ${details.location}`;
    super(`The API answered ${details.endpoint} with a redirect (HTTP ${details.status})${to}, which flowstream does not follow: check baseUrl`, 'UNEXPECTED_REDIRECT', details);
    this.status = details.status;
    this.location = details.location;
  }
}

/**
 * True for a {@link RedirectError} from any realm.
 *
 * @example
 * ```ts
 * if (isRedirectError(error)) console.log(error.status, error.location);
 * ```
 */
export const isRedirectError = /* @__PURE__ */ guardFor(RedirectError);
