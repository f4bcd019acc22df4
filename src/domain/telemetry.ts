import type { Endpoint, RequestPriority } from './endpoints.js';

/**
 * The vocabulary between the http layer and a telemetry hook (`ClientOptions.telemetry`): what the
 * client tells an observer of its API requests. The core knows no tracing library; an implementation
 * (`flowstream/otel`) turns these calls into spans and metrics. Times are readings of the client's
 * `scheduler`, so telemetry lives on the same clock as everything else the client does.
 */

/**
 * A request about to be made: one API call, its retries included.
 *
 * @example
 * ```ts
 * const start: RequestTelemetryStart = { endpoint: 'status', method: 'GET', priority: 'status', executionId: 'we-1', at: scheduler.now() };
 * ```
 */
export interface RequestTelemetryStart {
  readonly endpoint: Endpoint;
  readonly method: 'GET' | 'POST';
  /** Its class in the request budget. */
  readonly priority: RequestPriority;
  /** The execution it is about (status, output, abort). */
  readonly executionId?: string;
  /** What the caller gave as the parent of its telemetry (`CallOptions.telemetryParent`), opaque to the client. */
  readonly parent?: unknown;
  /** When the call was made, on the client's scheduler. */
  readonly at: number;
}

/**
 * How a request ended: its answer or failure, what it waited and how often it was tried.
 *
 * @example
 * ```ts
 * observer.end({ at: scheduler.now(), outcome: 'ok', status: 200, retries: 0, budgetWaitMs: 12, rateLimited: 0 });
 * ```
 */
export interface RequestTelemetryEnd {
  /** When it ended, on the client's scheduler. */
  readonly at: number;
  /** `ok`: answered with data; `error`: failed with `error`; `cancelled`: left before an outcome. */
  readonly outcome: 'ok' | 'error' | 'cancelled';
  /** The HTTP status of the last answer, when one came. */
  readonly status?: number;
  /** Attempts after the first. */
  readonly retries: number;
  /** Time spent waiting for the request budget, over every attempt, in ms. */
  readonly budgetWaitMs: number;
  /** Answers with HTTP 429 among its attempts. */
  readonly rateLimited: number;
  readonly error?: unknown;
}

/**
 * The observer of one request, handed back by {@link RequestTelemetryHook.request}.
 *
 * @example
 * ```ts
 * const observer: RequestTelemetry = { headers: { traceparent }, end: (end) => span.end(end.at) };
 * ```
 */
export interface RequestTelemetry {
  /** Headers sent with every attempt of the request (a `traceparent`); none by default. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Told once, when the request ends. */
  end(end: RequestTelemetryEnd): void;
}

/**
 * Where the client reports its requests. Without one, the request path does no telemetry work at all.
 *
 * @example
 * ```ts
 * const hook: RequestTelemetryHook = { request: (start) => ({ end: (end) => console.log(start.endpoint, end.outcome) }) };
 * ```
 */
export interface RequestTelemetryHook {
  request(start: RequestTelemetryStart): RequestTelemetry;
}
