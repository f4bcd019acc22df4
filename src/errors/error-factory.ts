import type { Endpoint } from '../domain/endpoints.js';
import type { RateLimitInfo } from '../domain/requests.js';
import { isRecord } from './validation-errors.js';
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
  type RateLimitScope,
  ServerError,
} from './api-errors.js';

// A failed answer's body as the transport read it: parsed JSON, or the raw text when it is not JSON (a proxy's page).
export type FailureBody = { readonly kind: 'json'; readonly value: unknown } | { readonly kind: 'text'; readonly text: string };

// What the transport hands the factory about one failed answer, so that classifying it needs no HTTP types.
export interface FailedAnswer {
  readonly endpoint: Endpoint;
  readonly status: number;
  readonly body: FailureBody;
  readonly rateLimit?: RateLimitInfo;
  readonly executionId?: string;
}

/**
 * Everything a failed answer tells, whichever class it becomes: each class keeps the fields it carries
 * (`modelResponse` an invalid request, the counters and the spent window a rate limit, `Retry-After` a
 * server error) and ignores the others.
 */
type AnswerDetails = ApiErrorDetails & {
  readonly modelResponse?: string | undefined;
  readonly rateLimit: RateLimitInfo;
  readonly scope?: RateLimitScope | undefined;
  readonly retryAfterMs?: number | undefined;
};

/** An error class an answer can become. */
type ApiErrorClass = new (details: AnswerDetails) => ApiError;

/** Every "… not found" code of the spec: E1000 canvas, E1021 execution, E1012 upload file, … */
const NOT_FOUND_CODES = ['E1000', 'E1002', 'E1003', 'E1004', 'E1005', 'E1006', 'E1007', 'E1008', 'E1009', 'E1011', 'E1012', 'E1013', 'E1014',
  'E1015', 'E1016', 'E1017', 'E1018', 'E1020', 'E1021', 'E1022', 'E1023', 'E1024'];

/**
 * Codes whose meaning does not depend on the HTTP status they came with. Business errors arrive as
 * HTTP 200 (service.md §1.2), so this table is read first and the code wins over the status.
 * Exported for the table test only.
 */
export const CLASS_BY_CODE: Readonly<Record<string, ApiErrorClass>> = {
  // Spec §7.3, codes with a stated status.
  CANVAS_NOT_FOUND: NotFoundError,
  WEBHOOK_NOT_FOUND: NotFoundError,
  INSUFFICIENT_CREDITS: InsufficientCreditsError,
  INVALID_REQUEST_BODY: InvalidRequestError,
  WEBHOOK_DISABLED: PermissionError,
  WEBHOOK_RATE_LIMITED: RateLimitError,
  // Spec §7.3, E-codes; E0000 is "any unexpected server fault" (service.md §1.2).
  E0000: ServerError,
  E0001: ServerError,
  E0003: InvalidRequestError,
  E0004: AuthenticationError,
  E0010: RateLimitError,
  E0012: AuthenticationError,
  E2002: InsufficientCreditsError,
  E2004: PayloadTooLargeError,
  E2005: PayloadTooLargeError,
  ...Object.fromEntries(NOT_FOUND_CODES.map((code) => [code, NotFoundError])),
};

/**
 * HTTP statuses, read when the body has no known code: framework bodies and proxies keep their
 * status (service.md §1.3). Any other 5xx is a server fault ({@link classOfStatus}). Exported for the
 * table test only.
 */
export const CLASS_BY_STATUS: Readonly<Partial<Record<number, ApiErrorClass>>> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  402: InsufficientCreditsError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitError,
};

// Own rows only: the server picks the code, and `constructor` or `__proto__` must not find Object.prototype's.
function classOfCode(errCode: string | undefined): ApiErrorClass | undefined {
  return errCode !== undefined && Object.hasOwn(CLASS_BY_CODE, errCode) ? CLASS_BY_CODE[errCode] : undefined;
}

// The status table, plus the one range rule it cannot hold: every 5xx is the service failing.
function classOfStatus(status: number): ApiErrorClass | undefined {
  return CLASS_BY_STATUS[status] ?? (status >= 500 ? ServerError : undefined);
}

/** The window the service's headers show spent (service.md §2.1: 0 remaining), the day first: it lasts longer. */
function spentScope(rateLimit: RateLimitInfo): RateLimitScope | undefined {
  if (rateLimit.remainingPerDay === 0) return 'day';
  return rateLimit.remainingPerMinute === 0 ? 'minute' : undefined;
}

/** What a failed answer's body says; a field it does not have is undefined. */
interface FailureFacts {
  readonly errCode?: string | undefined;
  readonly errMsg?: string | undefined;
  readonly traceId?: string | undefined;
  readonly modelResponse?: string | undefined;
}

function stringField(record: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

/** Non-JSON bodies (a proxy's HTML page, a truncated answer) are kept short in messages. */
const MAX_TEXT = 200;

/** Reads the four body shapes the service sends on failure (service.md §1.2, §1.3, spec §4.8). */
function readFacts(body: FailureBody): FailureFacts {
  if (body.kind === 'text') {
    const text = body.text.trim();
    return text === '' ? {} : { errMsg: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text };
  }
  const value = body.value;
  if (typeof value === 'string') return { errMsg: value }; // the IP throttler's bare-string 429 (service.md §1.3)
  if (!isRecord(value)) return {};
  const record = value;
  if (record['success'] === false) {
    return { errCode: stringField(record, 'errCode'), errMsg: stringField(record, 'errMsg'), traceId: stringField(record, 'traceId') };
  }
  // Framework body {statusCode, message, error, modelResponse?}; Nest validation sends `message` as a list.
  const message = record['message'];
  const errMsg = Array.isArray(message) ? message.filter((m): m is string => typeof m === 'string').join('; ') : stringField(record, 'message');
  return { errMsg, modelResponse: stringField(record, 'modelResponse') };
}

// The one place where HTTP statuses and error codes become classes: the code table first (a business
// error comes as HTTP 200, service.md §1.2), then the status table; neither knows it: a plain ApiError.
export function errorFromAnswer(answer: FailedAnswer): ApiError {
  const facts = readFacts(answer.body);
  const rateLimit = answer.rateLimit ?? {};
  const errorClass = classOfCode(facts.errCode) ?? classOfStatus(answer.status) ?? ApiError;
  return new errorClass({
    ...facts,
    endpoint: answer.endpoint,
    status: answer.status,
    executionId: answer.executionId,
    rateLimit,
    scope: spentScope(rateLimit),
    retryAfterMs: rateLimit.retryAfterMs,
  });
}
