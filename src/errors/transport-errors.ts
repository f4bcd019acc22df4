import type { Endpoint } from '../http/gate.js'; // type-only: errors name the endpoint they came from
import { brand, FlowstreamError, guardFor } from './flowstream-error.js';

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
  readonly executionId?: string;
  readonly cause?: unknown;
}

/**
 * A start that failed this way may have reached the server (PROTOCOL §2.2): flowstream never sends
 * it again, and says so, because a second start would run the workflow twice.
 */
function mayHaveStarted(endpoint: Endpoint): boolean {
  return endpoint === 'run';
}

const MAY_HAVE_STARTED = '; the execution may have started on the service, so the start was not retried';

/**
 * No answer came: the connection was refused or dropped, DNS failed, or the body could not be read.
 * `mayHaveStarted` is true for a start (see {@link ServerError}).
 *
 * @example
 * ```ts
 * if (isNetworkError(e) && !e.mayHaveStarted) retryLater();
 * ```
 */
export class NetworkError extends FlowstreamError {
  readonly endpoint: Endpoint;
  readonly mayHaveStarted: boolean;

  constructor(details: TransportErrorDetails) {
    const started = mayHaveStarted(details.endpoint);
    super(`Network error on ${details.endpoint}${started ? MAY_HAVE_STARTED : ''}`, 'NETWORK_ERROR', {
      ...(details.cause === undefined ? {} : { cause: details.cause }),
      ...(details.executionId === undefined ? {} : { executionId: details.executionId }),
    });
    this.endpoint = details.endpoint;
    this.mayHaveStarted = started;
    brand(this, 'NetworkError');
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
export class TimeoutError extends FlowstreamError {
  readonly endpoint: Endpoint;
  readonly timeoutMs: number;
  readonly mayHaveStarted: boolean;

  constructor(details: TransportErrorDetails & { readonly timeoutMs: number }) {
    const started = mayHaveStarted(details.endpoint);
    super(`${details.endpoint} timed out after ${details.timeoutMs} ms${started ? MAY_HAVE_STARTED : ''}`, 'TIMEOUT', {
      ...(details.executionId === undefined ? {} : { executionId: details.executionId }),
    });
    this.endpoint = details.endpoint;
    this.timeoutMs = details.timeoutMs;
    this.mayHaveStarted = started;
    brand(this, 'TimeoutError');
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
export const isNetworkError = guardFor<NetworkError>('NetworkError');

/**
 * True for a {@link TimeoutError} from any realm.
 *
 * @example
 * ```ts
 * if (isTimeoutError(error)) console.log(error.timeoutMs);
 * ```
 */
export const isTimeoutError = guardFor<TimeoutError>('TimeoutError');
