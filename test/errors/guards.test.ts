import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors/index.js';
import * as publicSurface from '../../src/index.js';

const details = { endpoint: 'status', status: 500 } as const;
const failedResult = { executionId: 'we-1', status: 'failed', endedBy: 'failed', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] } as const;

/** Each class, an instance, its guard, its code, and the guards of the ancestors it must satisfy. */
const cases = [
  [new errors.ApiError(details), errors.isApiError, 'API_ERROR', 'ApiError'],
  [new errors.AuthenticationError(details), errors.isAuthenticationError, 'AUTHENTICATION', 'AuthenticationError'],
  [new errors.PermissionError(details), errors.isPermissionError, 'PERMISSION_DENIED', 'PermissionError'],
  [new errors.InsufficientCreditsError(details), errors.isInsufficientCreditsError, 'INSUFFICIENT_CREDITS', 'InsufficientCreditsError'],
  [new errors.NotFoundError(details), errors.isNotFoundError, 'NOT_FOUND', 'NotFoundError'],
  [new errors.ConflictError(details), errors.isConflictError, 'CONFLICT', 'ConflictError'],
  [new errors.InvalidRequestError(details), errors.isInvalidRequestError, 'INVALID_REQUEST', 'InvalidRequestError'],
  [new errors.PayloadTooLargeError(details), errors.isPayloadTooLargeError, 'PAYLOAD_TOO_LARGE', 'PayloadTooLargeError'],
  [new errors.RateLimitError({ ...details, rateLimit: {} }), errors.isRateLimitError, 'RATE_LIMITED', 'RateLimitError'],
  [new errors.ServerError(details), errors.isServerError, 'SERVER_ERROR', 'ServerError'],
  [new errors.NetworkError({ endpoint: 'status' }), errors.isNetworkError, 'NETWORK_ERROR', 'NetworkError'],
  [new errors.TimeoutError({ endpoint: 'status', timeoutMs: 5 }), errors.isTimeoutError, 'TIMEOUT', 'TimeoutError'],
  [new errors.ResponseTooLargeError({ endpoint: 'status', maxBytes: 5 }), errors.isResponseTooLargeError, 'RESPONSE_TOO_LARGE', 'ResponseTooLargeError'],
  [new errors.RedirectError({ endpoint: 'status', status: 302, location: '' }), errors.isRedirectError, 'UNEXPECTED_REDIRECT', 'RedirectError'],
  [new errors.ResponseValidationError({ endpoint: 'status', reason: 'schema' }), errors.isResponseValidationError, 'RESPONSE_VALIDATION', 'ResponseValidationError'],
  [new errors.InvalidArgumentError('executionId', 'must not be empty'), errors.isInvalidArgumentError, 'INVALID_ARGUMENT', 'InvalidArgumentError'],
  [new errors.DownloadError({ url: 'http://127.0.0.1/x', status: 404 }), errors.isDownloadError, 'DOWNLOAD_FAILED', 'DownloadError'],
  [new errors.ConcurrencyLimitError('user-1', 5), errors.isConcurrencyLimitError, 'CONCURRENCY_LIMIT', 'ConcurrencyLimitError'],
  [new errors.WorkflowFailedError(failedResult), errors.isWorkflowFailedError, 'WORKFLOW_FAILED', 'WorkflowFailedError'],
  [new errors.RunTimeoutError(1_000, 'we-1'), errors.isRunTimeoutError, 'RUN_TIMEOUT', 'RunTimeoutError'],
] as const;

const guards = cases.map(([, guard]) => guard);

describe('error classes', () => {
  it.each(cases)('%s has its code, name, brand and only its own guards', (error, guard, code, name) => {
    expect(error.code).toBe(code);
    expect(error.name).toBe(name);
    expect(error).toBeInstanceOf(errors.FlowstreamError);
    expect(errors.isFlowstreamError(error)).toBe(true);
    expect(guard(error)).toBe(true);
    const isApi = error instanceof errors.ApiError;
    for (const other of guards) {
      if (other === guard) continue;
      expect(other(error)).toBe(other === errors.isApiError && isApi);
    }
  });

  it('covers every error class and guard the package exports, so a new one cannot be forgotten here', () => {
    const exported = Object.entries(publicSurface);
    const classes = exported.filter(([, value]) => typeof value === 'function' && value.prototype instanceof errors.FlowstreamError).map(([name]) => name);
    const guardNames = exported.filter(([name, value]) => /^is[A-Z]\w*Error$/u.test(name) && typeof value === 'function' && name !== 'isFlowstreamError').map(([name]) => name);
    expect(classes.sort()).toEqual(cases.map(([, , , name]) => name).sort());
    expect(guardNames.sort()).toEqual(cases.map(([, , , name]) => `is${name}`).sort());
  });

  it('guards work without instanceof: a copy of the brand from another realm is recognised', () => {
    const foreign = Object.create(null) as object;
    Object.defineProperty(foreign, Symbol.for('flowstream.error.kinds'), { value: ['FlowstreamError', 'ApiError', 'NotFoundError'] });
    expect(errors.isNotFoundError(foreign)).toBe(true);
    expect(errors.isApiError(foreign)).toBe(true);
    expect(errors.isServerError(foreign)).toBe(false);
    expect(errors.isApiError(new Error('plain'))).toBe(false);
    expect(errors.isApiError(null)).toBe(false);
  });

  it('start failures that may have reached the server say so; others do not', () => {
    expect(new errors.NetworkError({ endpoint: 'run' })).toMatchObject({ mayHaveStarted: true });
    expect(new errors.NetworkError({ endpoint: 'run' }).message).toContain('may have started');
    expect(new errors.TimeoutError({ endpoint: 'run', timeoutMs: 1 }).mayHaveStarted).toBe(true);
    expect(new errors.ResponseValidationError({ endpoint: 'run', reason: 'not-json' }).mayHaveStarted).toBe(true);
    expect(new errors.NetworkError({ endpoint: 'status' }).mayHaveStarted).toBe(false);
  });

  it('lists the first schema issues in the message', () => {
    const error = new errors.ResponseValidationError({ endpoint: 'output', reason: 'schema', issues: [{ path: ['data', 'files', 0, 'name'], message: 'expected string' }] });
    expect(error.message).toBe('The output response does not match the schema (data.files.0.name: expected string)');
    expect(inspect(error)).toContain('ResponseValidationError');
  });
});
