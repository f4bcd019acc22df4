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

/** What an answer says went wrong; the code table and the status table name one, the class table builds its error. */
type FailureKind = 'auth' | 'permission' | 'credits' | 'notFound' | 'conflict' | 'invalid' | 'tooLarge' | 'rateLimit' | 'server';

/**
 * Codes whose meaning does not depend on the HTTP status they came with. Business errors arrive as
 * HTTP 200 (service.md §1.2), so this table is read first and the code wins over the status.
 * Exported for the table test only.
 */
export const KIND_BY_CODE: Readonly<Record<string, FailureKind>> = {
  // Spec §7.3, codes with a stated status.
  CANVAS_NOT_FOUND: 'notFound',
  WEBHOOK_NOT_FOUND: 'notFound',
  INSUFFICIENT_CREDITS: 'credits',
  INVALID_REQUEST_BODY: 'invalid',
  WEBHOOK_DISABLED: 'permission',
  WEBHOOK_RATE_LIMITED: 'rateLimit',
  // Spec §7.3, E-codes; E0000 is "any unexpected server fault" (service.md §1.2).
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

/**
 * HTTP statuses, read when the body has no known code: framework bodies and proxies keep their
 * status (service.md §1.3). Any other 5xx is a server fault ({@link kindOfStatus}). Exported for the
 * table test only.
 */
export const KIND_BY_STATUS: Readonly<Partial<Record<number, FailureKind>>> = {
  400: 'invalid',
  401: 'auth',
  402: 'credits',
  403: 'permission',
  404: 'notFound',
  409: 'conflict',
  413: 'tooLarge',
  429: 'rateLimit',
};

// Own rows only: the server picks the code, and `constructor` or `__proto__` must not find Object.prototype's.
function kindOfCode(errCode: string | undefined): FailureKind | undefined {
  return errCode !== undefined && Object.hasOwn(KIND_BY_CODE, errCode) ? KIND_BY_CODE[errCode] : undefined;
}

// The status table, plus the one range rule it cannot hold: every 5xx is the service failing.
function kindOfStatus(status: number): FailureKind | undefined {
  return KIND_BY_STATUS[status] ?? (status >= 500 ? 'server' : undefined);
}

/** What some classes carry beyond {@link ApiErrorDetails}, read from the body or the answer's headers. */
interface FailureExtras {
  readonly modelResponse?: string;
  readonly rateLimit: RateLimitInfo;
}

/** The class each kind becomes; a kind with no row does not compile. */
const ERROR_BY_KIND: { readonly [K in FailureKind]: (details: ApiErrorDetails, extras: FailureExtras) => ApiError } = {
  auth: (details) => new AuthenticationError(details),
  permission: (details) => new PermissionError(details),
  credits: (details) => new InsufficientCreditsError(details),
  notFound: (details) => new NotFoundError(details),
  conflict: (details) => new ConflictError(details),
  invalid: (details, { modelResponse }) => new InvalidRequestError({ ...details, ...(modelResponse === undefined ? {} : { modelResponse }) }),
  tooLarge: (details) => new PayloadTooLargeError(details),
  rateLimit: (details, { rateLimit }) => new RateLimitError({ ...details, rateLimit, ...spentScope(rateLimit) }),
  server: (details, { rateLimit }) => new ServerError({ ...details, ...(rateLimit.retryAfterMs === undefined ? {} : { retryAfterMs: rateLimit.retryAfterMs }) }),
};

/** The window the service's headers show spent (service.md §2.1: 0 remaining), the day first: it lasts longer. */
function spentScope(rateLimit: RateLimitInfo): { readonly scope?: RateLimitScope } {
  if (rateLimit.remainingPerDay === 0) return { scope: 'day' };
  return rateLimit.remainingPerMinute === 0 ? { scope: 'minute' } : {};
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

/** Reads the four body shapes the service sends on failure (service.md §1.2, §1.3, spec §4.8). */
function readFacts(body: FailureBody): FailureFacts {
  if (body.kind === 'text') {
    const text = body.text.trim();
    return text === '' ? {} : { errMsg: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text };
  }
  const value = body.value;
  if (typeof value === 'string') return { errMsg: value }; // the IP throttler's bare-string 429 (service.md §1.3)
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

// The one place where HTTP statuses and error codes become classes: code table, then status table, then class table.
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
  // The code first (a business error comes as HTTP 200, service.md §1.2), then the status; neither known: a plain ApiError.
  const kind = kindOfCode(facts.errCode) ?? kindOfStatus(answer.status);
  if (kind === undefined) return new ApiError(details);
  return ERROR_BY_KIND[kind](details, { rateLimit: answer.rateLimit ?? {}, ...(facts.modelResponse === undefined ? {} : { modelResponse: facts.modelResponse }) });
}
