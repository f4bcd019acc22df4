import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { InvalidArgumentError, isRecord, knownKeys, nonNegative, positiveInteger, shownType, timerDelay } from '../errors/validation-errors.js';
import { ENDPOINT_NAMES, ownTimeoutMs, type Endpoint } from '../domain/endpoints.js';
import { DEFAULTS, type ClientOptions, type RetryOptions, type TimeoutOptions } from '../domain/options.js';
import type { RequestGate } from '../domain/requests.js';
import type { RequestTelemetryHook } from '../domain/telemetry.js';
import type { Logger } from '../domain/model.js';
import { safeLogger } from './safe-logger.js';

/**
 * What the http layer is given: the client's options, and the request gate every attempt passes
 * through (`createClient` hands in the budget).
 */
export interface HttpOptions extends ClientOptions {
  readonly gate?: RequestGate | undefined;
  /** Where every request is reported (`ClientOptions.telemetry`); none: no telemetry work at all. */
  readonly telemetry?: RequestTelemetryHook | undefined;
}

/** The http layer's options after defaults and checks: the one shape the transport reads. The API key is kept apart. */
export interface ResolvedOptions {
  readonly baseUrl: string;
  readonly fetch: typeof globalThis.fetch | undefined;
  readonly timeouts: Readonly<Record<Endpoint, number>>;
  readonly retry: Required<RetryOptions>;
  readonly headers: Readonly<Record<string, string>>;
  readonly logger: Logger | undefined;
  readonly maxResponseBytes: number;
  readonly gate: RequestGate | undefined;
  readonly telemetry: RequestTelemetryHook | undefined;
  readonly scheduler: SchedulerLike;
}

/** Reads `FLOWSTREAM_BASE_URL` where a `process` exists (Node), without importing anything Node-only. */
function baseUrlFromEnvironment(): string | undefined {
  const env = (globalThis as { readonly process?: { readonly env?: Readonly<Record<string, string | undefined>> } }).process?.env;
  const value = env?.['FLOWSTREAM_BASE_URL'];
  return value === '' ? undefined : value;
}

/** Checks the base URL and returns it without trailing slashes; it must end in the version segment (spec §9). */
export function normalizeBaseUrl(raw: string | undefined): string {
  if (raw === undefined) throw new InvalidArgumentError('baseUrl', 'is required (pass `baseUrl` or set FLOWSTREAM_BASE_URL), e.g. https://host/v1');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError('baseUrl', `is not a URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('baseUrl', `must use http or https (got ${url.protocol})`);
  if (url.username !== '' || url.password !== '') throw new InvalidArgumentError('baseUrl', 'must not contain credentials; pass the key as `apiKey`');
  if (url.search !== '' || url.hash !== '') throw new InvalidArgumentError('baseUrl', 'must not contain a query or fragment');
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/v1')) throw new InvalidArgumentError('baseUrl', `must end in /v1, e.g. ${url.origin}/v1 (got ${url.origin}${url.pathname})`);
  return `${url.origin}${path}`;
}

const timeout = timerDelay;

function normalizeTimeouts(option: number | TimeoutOptions | undefined): Record<Endpoint, number> {
  const raw: unknown = option;
  if (raw !== undefined && typeof raw !== 'number' && !isRecord(raw)) {
    throw new InvalidArgumentError('timeoutMs', `must be a number of ms or { default?, ${ENDPOINT_NAMES.join('?, ')}? } (got ${shownType(raw)})`);
  }
  const given: TimeoutOptions = typeof option === 'number' ? { default: option } : (option ?? {});
  knownKeys('timeoutMs', given, ['default', ...ENDPOINT_NAMES]);
  // A number (or `default`) replaces the common default, not an endpoint's own (copilot, upload).
  const fallback = given.default === undefined ? undefined : timeout('timeoutMs', given.default);
  return Object.fromEntries(
    ENDPOINT_NAMES.map((endpoint) => [endpoint, timeout(`timeoutMs.${endpoint}`, given[endpoint] ?? ownTimeoutMs(endpoint) ?? fallback ?? DEFAULTS.timeoutMs)]),
  ) as Record<Endpoint, number>;
}

function normalizeRetry(option: RetryOptions | false | undefined): Required<RetryOptions> {
  const raw: unknown = option;
  if (raw !== undefined && raw !== false && !isRecord(raw)) {
    throw new InvalidArgumentError('retry', `must be { retries?, baseDelayMs?, maxDelayMs?, … } or false (got ${raw === true ? 'true' : shownType(raw)})`);
  }
  const given: RetryOptions = option === false ? { retries: 0 } : (option ?? {});
  knownKeys('retry', given, Object.keys(DEFAULTS.retry));
  const retries = nonNegative('retry.retries', given.retries ?? DEFAULTS.retry.retries);
  if (!Number.isInteger(retries)) throw new InvalidArgumentError('retry.retries', `must be an integer (got ${String(retries)})`);
  // Every retry delay is waited by a timer: one past what a timer keeps would fire at once.
  const delay = (name: Exclude<keyof RetryOptions, 'retries'>): number => {
    const value = given[name] ?? DEFAULTS.retry[name];
    return value === 0 ? 0 : timerDelay(`retry.${name}`, value);
  };
  return { retries, baseDelayMs: delay('baseDelayMs'), maxDelayMs: delay('maxDelayMs'), rateLimitWaitMs: delay('rateLimitWaitMs'), maxWaitMs: delay('maxWaitMs') };
}

/** A header name is an RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/u;

/**
 * Extra headers, checked here rather than failing late inside `fetch` with a bare TypeError: a name
 * must be a token, a value a string without CR, LF or NUL (which would split the request, or be
 * refused by every fetch). Custom headers may not replace the credentials: an `Authorization` among
 * them is dropped.
 */
function checkHeaders(headers: unknown): Readonly<Record<string, string>> {
  if (headers === undefined) return {};
  if (!isRecord(headers)) throw new InvalidArgumentError('headers', 'must be an object of header names to values');
  const entries = Object.entries(headers);
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) throw new InvalidArgumentError('headers', `${JSON.stringify(name)} is not a header name`);
    if (typeof value !== 'string' || /[\r\n\0]/u.test(value)) throw new InvalidArgumentError(`headers.${name}`, 'must be a string without CR, LF or NUL');
  }
  // Every value was checked to be a string above.
  return Object.fromEntries(entries.filter(([name]) => name.toLowerCase() !== 'authorization')) as Readonly<Record<string, string>>;
}

/** A fetch of the wrong type would fail only at the first request, as a bare TypeError. */
function checkFetch(fetch: unknown): typeof globalThis.fetch | undefined {
  if (fetch === undefined || typeof fetch === 'function') return fetch as typeof globalThis.fetch | undefined;
  throw new InvalidArgumentError('fetch', `must be a function with the signature of the global fetch (got ${shownType(fetch)})`);
}

/** Header values must not break the request line; a key with a newline is a paste accident. */
function checkApiKey(apiKey: unknown): asserts apiKey is string {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') throw new InvalidArgumentError('apiKey', 'is required');
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\s\0-\x1f\x7f]/u.test(apiKey)) throw new InvalidArgumentError('apiKey', 'contains whitespace or control characters');
}

/**
 * Applies every default and check of {@link ClientOptions} in one place. The API key is checked
 * here but not copied into the result, so no options object ever holds it.
 */
export function normalizeOptions(options: HttpOptions): ResolvedOptions {
  checkApiKey(options.apiKey);
  return {
    baseUrl: normalizeBaseUrl(options.baseUrl ?? baseUrlFromEnvironment()),
    fetch: checkFetch(options.fetch),
    timeouts: normalizeTimeouts(options.timeoutMs),
    retry: normalizeRetry(options.retry),
    headers: checkHeaders(options.headers),
    logger: safeLogger(options.logger),
    maxResponseBytes: positiveInteger('maxResponseBytes', options.maxResponseBytes ?? DEFAULTS.maxResponseBytes),
    gate: options.gate,
    telemetry: options.telemetry,
    scheduler: options.scheduler ?? asyncScheduler,
  };
}
