import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors/index.js';
import * as publicSurface from '../../src/index.js';

type ErrorClass = (abstract new (...args: never[]) => errors.FlowstreamError) & { readonly kind: string };
type Guard = (value: unknown) => boolean;

const BRAND = Symbol.for('flowstream.error.kinds');

const isErrorClass = (value: unknown): value is ErrorClass =>
  typeof value === 'function' && (value === errors.FlowstreamError || value.prototype instanceof errors.FlowstreamError);

/** Every error class and every `isXError` guard the package exports, found by walking its exports. */
const exports: readonly (readonly [string, unknown])[] = Object.entries(publicSurface);
const exportedClasses = exports.filter((entry): entry is readonly [string, ErrorClass] => isErrorClass(entry[1]));
const exportedGuards = exports.filter((entry): entry is readonly [string, Guard] => /^is[A-Z]\w*Error$/u.test(entry[0]) && typeof entry[1] === 'function');
const exportedClass = new Map(exportedClasses);

const details = { endpoint: 'status', status: 500 } as const;
const failedResult = { executionId: 'we-1', status: 'failed', endedBy: 'failed', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] } as const;

/** How to build each exported class, and the code it must carry. A class exported without a row fails the tests below. */
const samples: Readonly<Record<string, readonly [make: () => errors.FlowstreamError, code: string]>> = {
  FlowstreamError: [() => new errors.FlowstreamError('failed', 'SOME_CODE'), 'SOME_CODE'],
  ApiError: [() => new errors.ApiError(details), 'API_ERROR'],
  AuthenticationError: [() => new errors.AuthenticationError(details), 'AUTHENTICATION'],
  PermissionError: [() => new errors.PermissionError(details), 'PERMISSION_DENIED'],
  InsufficientCreditsError: [() => new errors.InsufficientCreditsError(details), 'INSUFFICIENT_CREDITS'],
  NotFoundError: [() => new errors.NotFoundError(details), 'NOT_FOUND'],
  ConflictError: [() => new errors.ConflictError(details), 'CONFLICT'],
  InvalidRequestError: [() => new errors.InvalidRequestError(details), 'INVALID_REQUEST'],
  PayloadTooLargeError: [() => new errors.PayloadTooLargeError(details), 'PAYLOAD_TOO_LARGE'],
  RateLimitError: [() => new errors.RateLimitError({ ...details, rateLimit: {} }), 'RATE_LIMITED'],
  ServerError: [() => new errors.ServerError(details), 'SERVER_ERROR'],
  NetworkError: [() => new errors.NetworkError({ endpoint: 'status' }), 'NETWORK_ERROR'],
  TimeoutError: [() => new errors.TimeoutError({ endpoint: 'status', timeoutMs: 5 }), 'TIMEOUT'],
  ResponseTooLargeError: [() => new errors.ResponseTooLargeError({ endpoint: 'status', maxBytes: 5 }), 'RESPONSE_TOO_LARGE'],
  RedirectError: [() => new errors.RedirectError({ endpoint: 'status', status: 302, location: '' }), 'UNEXPECTED_REDIRECT'],
  ResponseValidationError: [() => new errors.ResponseValidationError({ endpoint: 'status', reason: 'schema' }), 'RESPONSE_VALIDATION'],
  InvalidArgumentError: [() => new errors.InvalidArgumentError('executionId', 'must not be empty'), 'INVALID_ARGUMENT'],
  DownloadError: [() => new errors.DownloadError({ url: 'http://127.0.0.1/x', status: 404 }), 'DOWNLOAD_FAILED'],
  ConcurrencyLimitError: [() => new errors.ConcurrencyLimitError('user-1', 5), 'CONCURRENCY_LIMIT'],
  StepInDoubtError: [() => new errors.StepInDoubtError('summary', Date.parse('2026-01-01T00:00:00Z'), 1), 'STEP_IN_DOUBT'],
  StartInDoubtError: [() => new errors.StartInDoubtError('invoice-7', Date.parse('2026-01-01T00:00:00Z')), 'START_IN_DOUBT'],
  UploadIncompleteError: [() => new errors.UploadIncompleteError([], 12, new Error('413')), 'UPLOAD_INCOMPLETE'],
  CorruptCheckpointError: [() => new publicSurface.CorruptCheckpointError('nightly', 'summary', 'not JSON'), 'CORRUPT_CHECKPOINT'],
  WorkflowFailedError: [() => new errors.WorkflowFailedError(failedResult), 'WORKFLOW_FAILED'],
  RunTimeoutError: [() => new errors.RunTimeoutError(1_000, 'we-1'), 'RUN_TIMEOUT'],
  RelayError: [() => new errors.RelayError(403, 'RUN_TOKEN', 'The run token has expired', { executionId: 'we-1' }), 'RELAY_ERROR'],
};

function sample(name: string): readonly [errors.FlowstreamError, string] {
  const row = samples[name];
  if (row === undefined) throw new Error(`${name} is exported but has no row in samples: add one`);
  return [row[0](), row[1]];
}

const brandOf = (error: object): unknown => (error as Record<symbol, unknown>)[BRAND];

describe('the exported error classes and guards', () => {
  it('are found in the exports, the run, download and transport errors among them', () => {
    expect(exportedClasses.map(([name]) => name)).toEqual(
      expect.arrayContaining(['FlowstreamError', 'ApiError', 'WorkflowFailedError', 'RunTimeoutError', 'ConcurrencyLimitError', 'DownloadError', 'RedirectError', 'ResponseTooLargeError']),
    );
  });

  it('have one instance row each, and there is no row for a class that is not exported', () => {
    expect(Object.keys(samples).sort()).toEqual(exportedClasses.map(([name]) => name).sort());
  });

  it('pair up: one guard isX per class X, and no guard without its class', () => {
    expect(exportedGuards.map(([name]) => name).sort()).toEqual(exportedClasses.map(([name]) => `is${name}`).sort());
  });
});

describe.each(exportedClasses)('%s', (exportName, errorClass) => {
  it('declares its own kind, equal to the name it is exported under (a minifier may rename the class)', () => {
    expect(Object.hasOwn(errorClass, 'kind')).toBe(true);
    expect(errorClass.kind).toBe(exportName);
  });

  it('builds an error of this class whose name and code are its own', () => {
    const [error, code] = sample(exportName);
    expect(error.constructor).toBe(errorClass);
    expect(error.name).toBe(exportName);
    expect(Object.getOwnPropertyDescriptor(error, 'name')).toMatchObject({ value: exportName, enumerable: false });
    expect(String(error).startsWith(`${exportName}: `)).toBe(true);
    expect(error.code).toBe(code);
  });

  it('carries the kinds of its class and ancestors, root first, under the global brand symbol', () => {
    const [error] = sample(exportName);
    const brand = brandOf(error);
    expect(Array.isArray(brand)).toBe(true);
    const kinds = brand as readonly string[];
    expect(kinds[0]).toBe('FlowstreamError');
    expect(kinds.at(-1)).toBe(exportName);
    expect([...kinds].sort()).toEqual(exportedClasses.filter(([, other]) => error instanceof other).map(([name]) => name).sort());
  });

  it('is recognised by the guard of its class and of each ancestor, and by no other guard', () => {
    const [error] = sample(exportName);
    for (const [guardName, guard] of exportedGuards) {
      const guarded = exportedClass.get(guardName.slice('is'.length));
      expect(guarded, `${guardName} guards no exported class`).toBeDefined();
      expect(guard(error), guardName).toBe(guarded !== undefined && error instanceof guarded);
    }
  });
});

describe('kind, name and brand of subclasses', () => {
  it('come from the static kind, not from the class name a minifier shortens', () => {
    // What a bundler makes of `class MissingCanvasError extends NotFoundError`: the class is renamed, its kind is not.
    const a = class extends errors.NotFoundError {
      static override readonly kind: string = 'MissingCanvasError';
    };
    const error = new a(details);
    expect(error.name).toBe('MissingCanvasError');
    expect(brandOf(error)).toEqual(['FlowstreamError', 'ApiError', 'NotFoundError', 'MissingCanvasError']);
    expect(errors.isNotFoundError(error)).toBe(true);
    expect(errors.isApiError(error)).toBe(true);
    expect(errors.isServerError(error)).toBe(false);
  });

  it('a subclass that declares no kind keeps its parent’s name and guards', () => {
    const error = new (class extends errors.ServerError {})(details);
    expect(error.name).toBe('ServerError');
    expect(brandOf(error)).toEqual(['FlowstreamError', 'ApiError', 'ServerError']);
    expect(errors.isServerError(error)).toBe(true);
  });
});

describe('guards across realms', () => {
  it('recognise a copy of the brand from another realm, without instanceof', () => {
    const foreign = Object.create(null) as object;
    Object.defineProperty(foreign, BRAND, { value: ['FlowstreamError', 'ApiError', 'NotFoundError'] });
    expect(errors.isNotFoundError(foreign)).toBe(true);
    expect(errors.isApiError(foreign)).toBe(true);
    expect(errors.isFlowstreamError(foreign)).toBe(true);
    expect(errors.isServerError(foreign)).toBe(false);
  });

  it('reject what carries no brand', () => {
    expect(errors.isApiError(new Error('plain'))).toBe(false);
    expect(errors.isFlowstreamError(Object.assign(new Error('named'), { name: 'NotFoundError' }))).toBe(false);
    expect(errors.isApiError(null)).toBe(false);
    expect(errors.isApiError('ApiError')).toBe(false);
  });
});

describe('error details', () => {
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

describe('a start whose connection was never made did not start anything', () => {
  const coded = (code: string): Error => Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
  it.each([
    ['a refused connection under fetch failed', new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }), false],
    ['an unknown host', new TypeError('fetch failed', { cause: coded('ENOTFOUND') }), false],
    ['every address refused', new TypeError('fetch failed', { cause: new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]) }), false],
    ['a connection reset after sending', new TypeError('fetch failed', { cause: coded('ECONNRESET') }), true],
    ['one address refused, another reset', new AggregateError([coded('ECONNREFUSED'), coded('ECONNRESET')]), true],
    ['no cause (a browser fetch)', undefined, true],
  ])('%s: mayHaveStarted %s', (_label, cause, started) => {
    const error = new errors.NetworkError({ endpoint: 'run', ...(cause === undefined ? {} : { cause }) });
    expect(error.mayHaveStarted).toBe(started);
    expect(error.connected).toBe(started);
    expect(error.message.includes('may have started')).toBe(started);
  });
});
