import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * A run relay refused or could not serve a run's events: `status` is its HTTP status (401 no token,
 * 403 a token refused, 404 no such execution, 502 it could not follow the execution), `reason` its
 * own short code (`RUN_TOKEN`, `NOT_FOUND`, …). `connectRun` does not retry a 4xx.
 *
 * @example
 * ```ts
 * connectRun(url, { token }).subscribe({ error: (e) => isRelayError(e) && e.status === 403 && askForANewLink() });
 * ```
 */
export class RelayError extends FlowstreamError {
  static override readonly kind: string = 'RelayError';

  readonly status: number;
  readonly reason: string;

  constructor(status: number, reason: string, message: string, options: { readonly executionId?: string } = {}) {
    super(`Relay answered ${status} (${reason}): ${message}`, 'RELAY_ERROR', options);
    this.status = status;
    this.reason = reason;
  }
}

/**
 * True for a {@link RelayError} from any realm.
 *
 * @example
 * ```ts
 * if (isRelayError(error)) console.log(error.status, error.reason);
 * ```
 */
export const isRelayError = /* @__PURE__ */ guardFor(RelayError);
