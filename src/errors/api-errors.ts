import type { Endpoint } from '../domain/endpoints.js';
import type { RateLimitInfo } from '../domain/requests.js';
import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * What every API answer that failed tells us (service.md §1.2–1.3); absent fields stay absent.
 *
 * @example
 * ```ts
 * new NotFoundError({ endpoint: 'status', status: 200, errCode: 'E1021', executionId: 'we-1' });
 * ```
 */
export interface ApiErrorDetails {
  readonly endpoint: Endpoint;
  /** The HTTP status; 200 for business errors sent in a `success:false` envelope (service.md §1.2). */
  readonly status: number;
  /** The envelope's `errCode` (`E1021`, `CANVAS_NOT_FOUND`, …). */
  readonly errCode?: string | undefined;
  /** The envelope's `errMsg`, or the framework body's `message`, or the bare text of the body. */
  readonly errMsg?: string | undefined;
  readonly traceId?: string | undefined;
  readonly executionId?: string | undefined;
  readonly cause?: unknown;
}

function describe(details: ApiErrorDetails, lead: string): string {
  const code = details.errCode === undefined ? '' : ` ${details.errCode}`;
  const text = details.errMsg === undefined ? '' : `: ${details.errMsg}`;
  const trace = details.traceId === undefined ? '' : ` (traceId ${details.traceId})`;
  return `${lead} on ${details.endpoint} (HTTP ${details.status}${code})${text}${trace}`;
}

/**
 * The service answered, and the answer is a failure: an HTTP error status or a `success:false`
 * envelope (which the service sends with HTTP 200, service.md §1.2). Subclasses name the kind.
 *
 * @example
 * ```ts
 * catch (e) { if (isApiError(e)) console.log(e.endpoint, e.status, e.errCode, e.traceId); }
 * ```
 */
export class ApiError extends FlowstreamError {
  static override readonly kind: string = 'ApiError';

  readonly endpoint: Endpoint;
  readonly status: number;
  readonly errCode?: string;
  readonly errMsg?: string;
  readonly traceId?: string;

  constructor(details: ApiErrorDetails, code = 'API_ERROR', lead = 'API request failed') {
    super(describe(details, lead), code, details);
    this.endpoint = details.endpoint;
    this.status = details.status;
    if (details.errCode !== undefined) this.errCode = details.errCode;
    if (details.errMsg !== undefined) this.errMsg = details.errMsg;
    if (details.traceId !== undefined) this.traceId = details.traceId;
  }
}

/**
 * 401: the API key is missing, malformed (it must start with `rf_`, service.md §1.6) or invalid.
 *
 * @example
 * ```ts
 * if (isAuthenticationError(e)) askForANewKey();
 * ```
 */
export class AuthenticationError extends ApiError {
  static override readonly kind: string = 'AuthenticationError';

  constructor(details: ApiErrorDetails) {
    super(details, 'AUTHENTICATION', 'Authentication failed');
  }
}

/**
 * 403: the key may not do this (the spec's "Workflow API is disabled", `WEBHOOK_DISABLED`; service.md §1.4).
 *
 * @example
 * ```ts
 * if (isPermissionError(e)) console.warn('the workflow API is disabled for this account');
 * ```
 */
export class PermissionError extends ApiError {
  static override readonly kind: string = 'PermissionError';

  constructor(details: ApiErrorDetails) {
    super(details, 'PERMISSION_DENIED', 'Permission denied');
  }
}

/**
 * 402 / `INSUFFICIENT_CREDITS` / `E2002`: the account lacks credits (service.md §1.4: not sent in
 * practice, where credits fail a node instead, §3.7).
 *
 * @example
 * ```ts
 * if (isInsufficientCreditsError(e)) showUpgradeHint();
 * ```
 */
export class InsufficientCreditsError extends ApiError {
  static override readonly kind: string = 'InsufficientCreditsError';

  constructor(details: ApiErrorDetails) {
    super(details, 'INSUFFICIENT_CREDITS', 'Insufficient credits');
  }
}

/**
 * The canvas, execution or file does not exist: HTTP 404, or `E1000` / `E1021` / `E1012` / … in an
 * HTTP 200 envelope (service.md §1.2), or the spec's `CANVAS_NOT_FOUND` / `WEBHOOK_NOT_FOUND`.
 *
 * @example
 * ```ts
 * const plan = await client.workflows.get(id).catch((e) => (isNotFoundError(e) ? undefined : Promise.reject(e)));
 * ```
 */
export class NotFoundError extends ApiError {
  static override readonly kind: string = 'NotFoundError';

  constructor(details: ApiErrorDetails) {
    super(details, 'NOT_FOUND', 'Not found');
  }
}

/**
 * 409: an identical run was sent within the service's 1 s duplicate window (service.md §2.2). The
 * first one may well be running: look for it rather than starting again at once.
 *
 * @example
 * ```ts
 * if (isConflictError(e)) await new Promise((r) => setTimeout(r, 1_100));
 * ```
 */
export class ConflictError extends ApiError {
  static override readonly kind: string = 'ConflictError';

  constructor(details: ApiErrorDetails) {
    super(details, 'CONFLICT', 'Duplicate request');
  }
}

/**
 * 400: the service rejected the request's parameters. For copilot, `modelResponse` holds the model's
 * raw answer when the service sent one (spec §4.8, service.md §5.3).
 *
 * @example
 * ```ts
 * if (isInvalidRequestError(e) && e.modelResponse !== undefined) console.log(e.modelResponse);
 * ```
 */
export class InvalidRequestError extends ApiError {
  static override readonly kind: string = 'InvalidRequestError';

  readonly modelResponse?: string;

  constructor(details: ApiErrorDetails & { readonly modelResponse?: string | undefined }) {
    super(details, 'INVALID_REQUEST', 'Invalid request');
    if (details.modelResponse !== undefined) this.modelResponse = details.modelResponse;
  }
}

/**
 * 413, `E2004` (text over 100k characters) or `E2005` (body over 100 KB): the request is too large.
 *
 * @example
 * ```ts
 * if (isPayloadTooLargeError(e)) console.warn('split the upload');
 * ```
 */
export class PayloadTooLargeError extends ApiError {
  static override readonly kind: string = 'PayloadTooLargeError';

  constructor(details: ApiErrorDetails) {
    super(details, 'PAYLOAD_TOO_LARGE', 'Payload too large');
  }
}

/**
 * The account's window a rate limit concerns (service.md §2.1).
 *
 * @example
 * ```ts
 * const scope: RateLimitScope = 'day';
 * ```
 */
export type RateLimitScope = 'minute' | 'day';

/**
 * 429: the account's rate limit (100/min, 10,000/day, service.md §2.1) or the IP throttler (§1.3).
 * `rateLimit` holds the `X-RateLimit-*` counters and `Retry-After` when the answer carried them.
 * Also raised by the request budget, before anything is sent, for a start when the day is spent
 * (by its own count or the service's): then `scope` is `'day'` and `resetAt` says by when the day's
 * window can have reset.
 *
 * @example
 * ```ts
 * if (isRateLimitError(e) && e.scope === 'day') scheduleRetryAt(e.resetAt);
 * ```
 */
export class RateLimitError extends ApiError {
  static override readonly kind: string = 'RateLimitError';

  readonly rateLimit: RateLimitInfo;
  /** Which of the account's windows is spent, when known: the service's headers showed 0 left, or the budget knows. */
  readonly scope?: RateLimitScope;
  /** When that window can have reset at the latest, in ms on the client's clock, when known. */
  readonly resetAt?: number;

  constructor(details: ApiErrorDetails & { readonly rateLimit: RateLimitInfo; readonly scope?: RateLimitScope | undefined; readonly resetAt?: number | undefined }) {
    super(details, 'RATE_LIMITED', 'Rate limit exceeded');
    this.rateLimit = details.rateLimit;
    if (details.scope !== undefined) this.scope = details.scope;
    if (details.resetAt !== undefined) this.resetAt = details.resetAt;
  }
}

/**
 * 5xx or `E0000` ("an unknown error", service.md §1.2): the service failed. For a start,
 * `mayHaveStarted` is true: the execution may exist although no id came back (service.md §2.2), so
 * flowstream never retries it; check `workflows`/your own records before starting again.
 *
 * @example
 * ```ts
 * if (isServerError(e) && e.mayHaveStarted) console.warn('the run may be executing already');
 * ```
 */
export class ServerError extends ApiError {
  static override readonly kind: string = 'ServerError';

  readonly mayHaveStarted: boolean;
  /** `Retry-After` of the answer, when the server sent one. */
  readonly retryAfterMs?: number;

  constructor(details: ApiErrorDetails & { readonly retryAfterMs?: number | undefined }) {
    const mayHaveStarted = details.endpoint === 'run';
    super(details, 'SERVER_ERROR', mayHaveStarted ? 'Server error (the execution may have started)' : 'Server error');
    this.mayHaveStarted = mayHaveStarted;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * True for a {@link ApiError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isApiError(error)) console.log(error.code);
 * ```
 */
export const isApiError = /* @__PURE__ */ guardFor(ApiError);
/**
 * True for a {@link AuthenticationError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isAuthenticationError(error)) console.log(error.code);
 * ```
 */
export const isAuthenticationError = /* @__PURE__ */ guardFor(AuthenticationError);
/**
 * True for a {@link PermissionError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isPermissionError(error)) console.log(error.code);
 * ```
 */
export const isPermissionError = /* @__PURE__ */ guardFor(PermissionError);
/**
 * True for a {@link InsufficientCreditsError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isInsufficientCreditsError(error)) console.log(error.code);
 * ```
 */
export const isInsufficientCreditsError = /* @__PURE__ */ guardFor(InsufficientCreditsError);
/**
 * True for a {@link NotFoundError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isNotFoundError(error)) console.log(error.code);
 * ```
 */
export const isNotFoundError = /* @__PURE__ */ guardFor(NotFoundError);
/**
 * True for a {@link ConflictError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isConflictError(error)) console.log(error.code);
 * ```
 */
export const isConflictError = /* @__PURE__ */ guardFor(ConflictError);
/**
 * True for a {@link InvalidRequestError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isInvalidRequestError(error)) console.log(error.code);
 * ```
 */
export const isInvalidRequestError = /* @__PURE__ */ guardFor(InvalidRequestError);
/**
 * True for a {@link PayloadTooLargeError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isPayloadTooLargeError(error)) console.log(error.code);
 * ```
 */
export const isPayloadTooLargeError = /* @__PURE__ */ guardFor(PayloadTooLargeError);
/**
 * True for a {@link RateLimitError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isRateLimitError(error)) console.log(error.code);
 * ```
 */
export const isRateLimitError = /* @__PURE__ */ guardFor(RateLimitError);
/**
 * True for a {@link ServerError} from any realm (`instanceof` fails across realms).
 *
 * @example
 * ```ts
 * if (isServerError(error)) console.log(error.code);
 * ```
 */
export const isServerError = /* @__PURE__ */ guardFor(ServerError);
