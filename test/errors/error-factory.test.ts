import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  InsufficientCreditsError,
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionError,
  RateLimitError,
  ServerError,
} from '../../src/errors/api-errors.js';
import type { Endpoint } from '../../src/domain/endpoints.js';
import { errorFromAnswer, CLASS_BY_CODE, CLASS_BY_STATUS, type FailureBody } from '../../src/errors/error-factory.js';

const envelope = (errCode: string, errMsg = 'text'): FailureBody => ({ kind: 'json', value: { success: false, errCode, errMsg, traceId: 't-1' } });
const nest = (statusCode: number, message: string, error: string): FailureBody => ({ kind: 'json', value: { statusCode, message, error } });

type Row = readonly [label: string, endpoint: Endpoint, status: number, body: FailureBody, expected: new (...args: never[]) => ApiError, code: string];

const table: readonly Row[] = [
  // service.md §1.2: business errors as HTTP 200; the code decides.
  ['E1021 as HTTP 200', 'status', 200, envelope('E1021'), NotFoundError, 'NOT_FOUND'],
  ['E1000 as HTTP 200', 'run', 200, envelope('E1000'), NotFoundError, 'NOT_FOUND'],
  ['E1012 as HTTP 200', 'upload', 200, envelope('E1012'), NotFoundError, 'NOT_FOUND'],
  ['E1024 as HTTP 200', 'detail', 200, envelope('E1024'), NotFoundError, 'NOT_FOUND'],
  ['E0000 as HTTP 200', 'output', 200, envelope('E0000'), ServerError, 'SERVER_ERROR'],
  ['E0000 with 500', 'output', 500, envelope('E0000'), ServerError, 'SERVER_ERROR'],
  ['E2005 as HTTP 200', 'run', 200, envelope('E2005'), PayloadTooLargeError, 'PAYLOAD_TOO_LARGE'],
  ['E2004 as HTTP 200', 'run', 200, envelope('E2004'), PayloadTooLargeError, 'PAYLOAD_TOO_LARGE'],
  ['E2002 as HTTP 200', 'run', 200, envelope('E2002'), InsufficientCreditsError, 'INSUFFICIENT_CREDITS'],
  ['E0012 as HTTP 200', 'search', 200, envelope('E0012'), AuthenticationError, 'AUTHENTICATION'],
  ['E0010 as HTTP 200', 'search', 200, envelope('E0010'), RateLimitError, 'RATE_LIMITED'],
  ['E0003 as HTTP 200', 'search', 200, envelope('E0003'), InvalidRequestError, 'INVALID_REQUEST'],
  ['unknown code as HTTP 200', 'search', 200, envelope('E9999'), ApiError, 'API_ERROR'],
  // The spec's named codes (spec §7.3), with their stated statuses.
  ['CANVAS_NOT_FOUND', 'run', 404, envelope('CANVAS_NOT_FOUND'), NotFoundError, 'NOT_FOUND'],
  ['WEBHOOK_NOT_FOUND', 'run', 404, envelope('WEBHOOK_NOT_FOUND'), NotFoundError, 'NOT_FOUND'],
  ['INSUFFICIENT_CREDITS 402', 'run', 402, envelope('INSUFFICIENT_CREDITS'), InsufficientCreditsError, 'INSUFFICIENT_CREDITS'],
  ['INVALID_REQUEST_BODY 400', 'run', 400, envelope('INVALID_REQUEST_BODY'), InvalidRequestError, 'INVALID_REQUEST'],
  ['WEBHOOK_DISABLED 403', 'run', 403, envelope('WEBHOOK_DISABLED'), PermissionError, 'PERMISSION_DENIED'],
  ['WEBHOOK_RATE_LIMITED 429', 'run', 429, envelope('WEBHOOK_RATE_LIMITED'), RateLimitError, 'RATE_LIMITED'],
  // The spec's 404 for the same business errors (spec profile).
  ['E1021 with 404', 'status', 404, envelope('E1021'), NotFoundError, 'NOT_FOUND'],
  // service.md §1.3: framework bodies keep their status.
  ['Nest 400', 'run', 400, nest(400, 'Invalid request body', 'Bad Request'), InvalidRequestError, 'INVALID_REQUEST'],
  ['Nest 401', 'status', 401, nest(401, 'Invalid API key', 'Unauthorized'), AuthenticationError, 'AUTHENTICATION'],
  ['Nest 403', 'run', 403, nest(403, 'Workflow API is disabled', 'Forbidden'), PermissionError, 'PERMISSION_DENIED'],
  ['Nest 404', 'detail', 404, nest(404, 'Workflow not found', 'Not Found'), NotFoundError, 'NOT_FOUND'],
  ['Nest 409', 'run', 409, nest(409, 'Duplicate request detected. Please wait before retrying.', 'Conflict'), ConflictError, 'CONFLICT'],
  ['Nest 413', 'upload', 413, nest(413, 'File too large', 'Payload Too Large'), PayloadTooLargeError, 'PAYLOAD_TOO_LARGE'],
  ['Nest 429', 'status', 429, nest(429, 'Rate limit exceeded: 100 requests per minute', 'Too Many Requests'), RateLimitError, 'RATE_LIMITED'],
  ['Nest 502', 'status', 502, nest(502, 'Bad Gateway', 'Bad Gateway'), ServerError, 'SERVER_ERROR'],
  ['402 without a body', 'run', 402, { kind: 'text', text: '' }, InsufficientCreditsError, 'INSUFFICIENT_CREDITS'],
  // The IP throttler's bare JSON string (service.md §1.3).
  ['bare-string 429', 'search', 429, { kind: 'json', value: 'ThrottlerException: Too Many Requests' }, RateLimitError, 'RATE_LIMITED'],
  // Non-JSON bodies (a proxy's page).
  ['HTML 503', 'status', 503, { kind: 'text', text: '<html>Service Unavailable</html>' }, ServerError, 'SERVER_ERROR'],
  ['text 418', 'status', 418, { kind: 'text', text: 'teapot' }, ApiError, 'API_ERROR'],
  ['JSON array 500', 'status', 500, { kind: 'json', value: [1, 2] }, ServerError, 'SERVER_ERROR'],
];

type ApiErrorClass = (new (...args: never[]) => ApiError) & { readonly kind: string };
type Expected = readonly [errorClass: ApiErrorClass, code: string];

/** Each row of the status table, alone: a body that names no code (openai-node's core-error test, one row per status). */
const byStatus: readonly (readonly [status: number, ...Expected])[] = [
  [400, InvalidRequestError, 'INVALID_REQUEST'],
  [401, AuthenticationError, 'AUTHENTICATION'],
  [402, InsufficientCreditsError, 'INSUFFICIENT_CREDITS'],
  [403, PermissionError, 'PERMISSION_DENIED'],
  [404, NotFoundError, 'NOT_FOUND'],
  [409, ConflictError, 'CONFLICT'],
  [413, PayloadTooLargeError, 'PAYLOAD_TOO_LARGE'],
  [429, RateLimitError, 'RATE_LIMITED'],
  // Every 5xx is the service failing, listed or not.
  [500, ServerError, 'SERVER_ERROR'],
  [502, ServerError, 'SERVER_ERROR'],
  [503, ServerError, 'SERVER_ERROR'],
  [504, ServerError, 'SERVER_ERROR'],
  [599, ServerError, 'SERVER_ERROR'],
  // Not in the table: the plain root of API errors.
  [200, ApiError, 'API_ERROR'],
  [405, ApiError, 'API_ERROR'],
  [418, ApiError, 'API_ERROR'],
  [422, ApiError, 'API_ERROR'],
];

const notFound: Expected = [NotFoundError, 'NOT_FOUND'];

/** Each row of the code table: the class the code means, whatever status it came with. */
const byCode: Readonly<Record<string, Expected>> = {
  CANVAS_NOT_FOUND: notFound,
  WEBHOOK_NOT_FOUND: notFound,
  INSUFFICIENT_CREDITS: [InsufficientCreditsError, 'INSUFFICIENT_CREDITS'],
  INVALID_REQUEST_BODY: [InvalidRequestError, 'INVALID_REQUEST'],
  WEBHOOK_DISABLED: [PermissionError, 'PERMISSION_DENIED'],
  WEBHOOK_RATE_LIMITED: [RateLimitError, 'RATE_LIMITED'],
  E0000: [ServerError, 'SERVER_ERROR'],
  E0001: [ServerError, 'SERVER_ERROR'],
  E0003: [InvalidRequestError, 'INVALID_REQUEST'],
  E0004: [AuthenticationError, 'AUTHENTICATION'],
  E0010: [RateLimitError, 'RATE_LIMITED'],
  E0012: [AuthenticationError, 'AUTHENTICATION'],
  E2002: [InsufficientCreditsError, 'INSUFFICIENT_CREDITS'],
  E2004: [PayloadTooLargeError, 'PAYLOAD_TOO_LARGE'],
  E2005: [PayloadTooLargeError, 'PAYLOAD_TOO_LARGE'],
  ...Object.fromEntries(
    ['E1000', 'E1002', 'E1003', 'E1004', 'E1005', 'E1006', 'E1007', 'E1008', 'E1009', 'E1011', 'E1012', 'E1013', 'E1014',
      'E1015', 'E1016', 'E1017', 'E1018', 'E1020', 'E1021', 'E1022', 'E1023', 'E1024'].map((code) => [code, notFound]),
  ),
};

function expectClass(error: ApiError, [errorClass, code]: Expected): void {
  expect(error.constructor).toBe(errorClass);
  expect(error.code).toBe(code);
  expect(error.name).toBe(errorClass.kind);
}

describe('the status table', () => {
  it('has a row in this test for each of its rows, and no other below 500', () => {
    const listed = byStatus.filter(([status, errorClass]) => status < 500 && errorClass !== ApiError).map(([status]) => status);
    expect(listed.sort((a, b) => a - b)).toEqual(Object.keys(CLASS_BY_STATUS).map(Number).sort((a, b) => a - b));
  });

  it.each(byStatus)('HTTP %i without a code → %o', (status, ...expected) => {
    expectClass(errorFromAnswer({ endpoint: 'status', status, body: { kind: 'text', text: '' } }), expected);
    expectClass(errorFromAnswer({ endpoint: 'status', status, body: nest(status, 'reason', 'Reason') }), expected);
  });
});

describe('the code table', () => {
  it('has a row in this test for each of its rows, and no other', () => {
    expect(Object.keys(byCode).sort()).toEqual(Object.keys(CLASS_BY_CODE).sort());
  });

  // service.md §1.2: business errors come as HTTP 200, and a spec-faithful server may send a status
  // that says otherwise; the code is read first and wins.
  it.each(Object.entries(byCode))('%s → %o, with HTTP 200, 404, 400 or 500', (errCode, expected) => {
    for (const status of [200, 404, 400, 500]) {
      const error = errorFromAnswer({ endpoint: 'run', status, body: envelope(errCode) });
      expectClass(error, expected);
      expect(error).toMatchObject({ status, errCode });
    }
  });

  it('does not take a code named after an Object.prototype member for a row', () => {
    for (const errCode of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expectClass(errorFromAnswer({ endpoint: 'status', status: 200, body: envelope(errCode) }), [ApiError, 'API_ERROR']);
      expectClass(errorFromAnswer({ endpoint: 'status', status: 404, body: envelope(errCode) }), notFound);
    }
  });
});

describe('errorFromAnswer maps every (status, body) to one class', () => {
  it.each(table)('%s → %s', (_label, endpoint, status, body, expected, code) => {
    const error = errorFromAnswer({ endpoint, status, body });
    expect(error).toBeInstanceOf(expected);
    expect(error.constructor).toBe(expected);
    expect(error.code).toBe(code);
    expect(error.endpoint).toBe(endpoint);
    expect(error.status).toBe(status);
  });
});

describe('errorFromAnswer keeps what the answer said', () => {
  it('carries errCode, errMsg and traceId of an envelope, and the executionId', () => {
    const error = errorFromAnswer({ endpoint: 'status', status: 200, body: envelope('E1021', 'Workflow execution not found, please refresh'), executionId: 'we-1' });
    expect(error).toMatchObject({ errCode: 'E1021', errMsg: 'Workflow execution not found, please refresh', traceId: 't-1', executionId: 'we-1' });
    expect(error.message).toBe('Not found on status (HTTP 200 E1021): Workflow execution not found, please refresh (traceId t-1)');
  });

  it('reads the message of a framework body, a list of messages included', () => {
    const error = errorFromAnswer({ endpoint: 'run', status: 400, body: { kind: 'json', value: { statusCode: 400, message: ['a', 'b'], error: 'Bad Request' } } });
    expect(error.errMsg).toBe('a; b');
  });

  it('keeps modelResponse of a copilot 400 (spec §4.8)', () => {
    const error = errorFromAnswer({ endpoint: 'copilot', status: 400, body: { kind: 'json', value: { statusCode: 400, message: 'Failed', error: 'Bad Request', modelResponse: 'raw' } } });
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ modelResponse: 'raw' });
  });

  it('keeps the rate-limit counters and Retry-After of a 429', () => {
    const rateLimit = { remainingPerMinute: 0, limitPerMinute: 100, retryAfterMs: 3000 };
    const error = errorFromAnswer({ endpoint: 'search', status: 429, body: { kind: 'json', value: 'Too Many Requests' }, rateLimit });
    expect(error).toMatchObject({ rateLimit });
    expect(error.errMsg).toBe('Too Many Requests');
  });

  it('shortens a long non-JSON body', () => {
    const error = errorFromAnswer({ endpoint: 'status', status: 502, body: { kind: 'text', text: 'x'.repeat(5000) } });
    expect(error.errMsg?.length).toBeLessThanOrEqual(201);
  });

  it('says that a start may have started on a server error, and only a start', () => {
    const run = errorFromAnswer({ endpoint: 'run', status: 502, body: { kind: 'text', text: '' } });
    const status = errorFromAnswer({ endpoint: 'status', status: 502, body: { kind: 'text', text: '' } });
    expect(run).toMatchObject({ mayHaveStarted: true });
    expect(run.message).toContain('may have started');
    expect(status).toMatchObject({ mayHaveStarted: false });
  });
});
