import type { Endpoint } from '../domain/endpoints.js';
import type { RateLimitInfo } from '../domain/requests.js';
import {
  ApiError,
  type ApiErrorDetails,
  AuthenticationError,
  ConflictError,
  InsufficientCreditsError,
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionError,
  RateLimitError,
  ServerError,
} from './api-errors.js';

/**
 * A failed answer's body as the transport read it: parsed JSON, or the raw text when it is not JSON.
 *
 * @example
 * ```ts
 * const body: FailureBody = { kind: 'text', text: '<html>502</html>' };
 * ```
 */
export type FailureBody = { readonly kind: 'json'; readonly value: unknown } | { readonly kind: 'text'; readonly text: string };

/**
 * Everything the factory needs to know about one failed answer.
 *
 * @example
 * ```ts
 * errorFromAnswer({ endpoint: 'run', status: 409, body: { kind: 'json', value: { statusCode: 409, message: 'Duplicate', error: 'Conflict' } } });
 * ```
 */
export interface FailedAnswer {
  readonly endpoint: Endpoint;
  readonly status: number;
  readonly body: FailureBody;
  readonly rateLimit?: RateLimitInfo;
  readonly executionId?: string;
}

/** The error kinds an answer can be classified as; the order of `classify` decides between them. */
type Kind = 'auth' | 'permission' | 'credits' | 'notFound' | 'conflict' | 'invalid' | 'tooLarge' | 'rateLimit' | 'server';

/**
 * Codes whose meaning does not depend on the HTTP status they came with. Business errors arrive as
 * HTTP 200 (PROTOCOL §1.2), so the code must win over the status.
 */
const KIND_BY_CODE: Readonly<Record<string, Kind>> = {
  // Spec §7.3, codes with a stated status.
  CANVAS_NOT_FOUND: 'notFound',
  WEBHOOK_NOT_FOUND: 'notFound',
  INSUFFICIENT_CREDITS: 'credits',
  INVALID_REQUEST_BODY: 'invalid',
  WEBHOOK_DISABLED: 'permission',
  WEBHOOK_RATE_LIMITED: 'rateLimit',
  // Spec §7.3, E-codes; E0000 is "any unexpected server fault" (PROTOCOL §1.2).
  E0000: 'server',
  E0001: 'server',
  E0003: 'invalid',
  E0004: 'auth',
  E0010: 'rateLimit',
  E0012: 'auth',
  E2002: 'credits',
  E2004: 'tooLarge',
  E2005: 'tooLarge',
  // Every "… not found" code of the spec: E1000 canvas, E1021 execution, E1012 upload file, …
  ...Object.fromEntries(
    ['E1000', 'E1002', 'E1003', 'E1004', 'E1005', 'E1006', 'E1007', 'E1008', 'E1009', 'E1011', 'E1012', 'E1013', 'E1014',
      'E1015', 'E1016', 'E1017', 'E1018', 'E1020', 'E1021', 'E1022', 'E1023', 'E1024'].map((code) => [code, 'notFound' as const]),
  ),
};

function kindByStatus(status: number): Kind | undefined {
  if (status >= 500) return 'server';
  switch (status) {
    case 400:
      return 'invalid';
    case 401:
      return 'auth';
    case 402:
      return 'credits';
    case 403:
      return 'permission';
    case 404:
      return 'notFound';
    case 409:
      return 'conflict';
    case 413:
      return 'tooLarge';
    case 429:
      return 'rateLimit';
    default:
      return undefined;
  }
}

interface FailureFacts {
  readonly errCode?: string;
  readonly errMsg?: string;
  readonly traceId?: string;
  readonly modelResponse?: string;
}

function stringField(record: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

/** Non-JSON bodies (a proxy's HTML page, a truncated answer) are kept short in messages. */
const MAX_TEXT = 200;

/** Reads the four body shapes the service sends on failure (PROTOCOL §1.2, §1.3, spec §4.8). */
function readFacts(body: FailureBody): FailureFacts {
  if (body.kind === 'text') {
    const text = body.text.trim();
    return text === '' ? {} : { errMsg: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text };
  }
  const value = body.value;
  if (typeof value === 'string') return { errMsg: value }; // the IP throttler's bare-string 429 (PROTOCOL §1.3)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const record = value as Readonly<Record<string, unknown>>;
  if (record['success'] === false) {
    const errCode = stringField(record, 'errCode');
    const errMsg = stringField(record, 'errMsg');
    const traceId = stringField(record, 'traceId');
    return { ...(errCode === undefined ? {} : { errCode }), ...(errMsg === undefined ? {} : { errMsg }), ...(traceId === undefined ? {} : { traceId }) };
  }
  // Framework body {statusCode, message, error, modelResponse?}; Nest validation sends `message` as a list.
  const message = record['message'];
  const errMsg = Array.isArray(message) ? message.filter((m): m is string => typeof m === 'string').join('; ') : stringField(record, 'message');
  const modelResponse = stringField(record, 'modelResponse');
  return { ...(errMsg === undefined ? {} : { errMsg }), ...(modelResponse === undefined ? {} : { modelResponse }) };
}

/**
 * Builds the one error that describes a failed answer: the only place where HTTP statuses and
 * error codes become classes. The code decides first (business errors come as HTTP 200, PROTOCOL
 * §1.2), then the HTTP status, and anything else is a plain {@link ApiError}.
 *
 * @example
 * ```ts
 * const error = errorFromAnswer({ endpoint: 'status', status: 200, body: { kind: 'json', value: { success: false, errCode: 'E1021' } } });
 * // error is a NotFoundError
 * ```
 */
export function errorFromAnswer(answer: FailedAnswer): ApiError {
  const facts = readFacts(answer.body);
  const details: ApiErrorDetails = {
    endpoint: answer.endpoint,
    status: answer.status,
    ...(facts.errCode === undefined ? {} : { errCode: facts.errCode }),
    ...(facts.errMsg === undefined ? {} : { errMsg: facts.errMsg }),
    ...(facts.traceId === undefined ? {} : { traceId: facts.traceId }),
    ...(answer.executionId === undefined ? {} : { executionId: answer.executionId }),
  };
  const kind = (facts.errCode === undefined ? undefined : KIND_BY_CODE[facts.errCode]) ?? kindByStatus(answer.status);
  const rateLimit = answer.rateLimit ?? {};
  switch (kind) {
    case undefined:
      return new ApiError(details);
    case 'auth':
      return new AuthenticationError(details);
    case 'permission':
      return new PermissionError(details);
    case 'credits':
      return new InsufficientCreditsError(details);
    case 'notFound':
      return new NotFoundError(details);
    case 'conflict':
      return new ConflictError(details);
    case 'invalid':
      return new InvalidRequestError({ ...details, ...(facts.modelResponse === undefined ? {} : { modelResponse: facts.modelResponse }) });
    case 'tooLarge':
      return new PayloadTooLargeError(details);
    case 'rateLimit':
      return new RateLimitError({ ...details, rateLimit });
    case 'server':
      return new ServerError({ ...details, ...(rateLimit.retryAfterMs === undefined ? {} : { retryAfterMs: rateLimit.retryAfterMs }) });
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}
