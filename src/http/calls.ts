import type { CallPriority } from '../domain/endpoints.js';
import type { ExecutionOutput, ExecutionSnapshot, StartedExecution, Variables } from '../domain/model.js';

/** The shapes of the http layer's calls: per-call options and the execution endpoints' seam. */

/**
 * Per-call options: every call can be cancelled, and placed in the request budget's classes.
 *
 * @example
 * ```ts
 * await client.executions.status(id, { signal: AbortSignal.timeout(5_000), priority: 'interactive' });
 * ```
 */
export interface CallOptions {
  readonly signal?: AbortSignal;
  /**
   * The class the call's requests take in the budget instead of their endpoint's: `'interactive'`
   * (a person waits on it: ahead of the runs' polls) or `'status'` (it may wait its turn among the runs'
   * reads). By default detail, upload, copilot and search are interactive, status and output reads,
   * and a start or an abort keeps its own class above them all; either option lowers those.
   */
  readonly priority?: CallPriority;
  /**
   * The parent of the call's telemetry, for the client's `telemetry` hook (with `flowstream/otel`, an
   * OpenTelemetry `Context` whose span the request's span goes under). Ignored without a hook.
   */
  readonly telemetryParent?: unknown;
}

/**
 * Options of a start. `onSending` is told whether a request of the start is on its way: `true` as an
 * attempt leaves (the execution may exist from then on), `false` when that attempt failed having
 * surely started nothing (the service refused it — a 429, after which it waits to be sent again, or
 * another 4xx — or its connection was never made). An attempt that failed without such an answer (its
 * timeout passed, its connection was lost, a 5xx) says nothing more: the execution may exist. While
 * nothing is on its way, aborting `signal` withdraws the start: no execution exists. The run layer
 * uses it to abort a start that was sent, and to withdraw one that was not.
 *
 * @example
 * ```ts
 * let sent = false;
 * const started = client.executions.start('c-1', {}, { signal, onSending: (sending) => { sent = sending; } });
 * ```
 */
export interface StartOptions extends CallOptions {
  readonly onSending?: (sending: boolean) => void;
}

/**
 * The execution endpoints as the run layer sees them: the seam behind which `runs/` is tested in
 * virtual time, and which the budget wraps.
 *
 * @example
 * ```ts
 * const api: ExecutionsApi = createHttpClient({ apiKey, baseUrl }).executions;
 * ```
 */
export interface ExecutionsApi {
  start(canvasId: string, input?: { readonly variables?: Variables }, options?: StartOptions): Promise<StartedExecution>;
  status(executionId: string, options?: CallOptions): Promise<ExecutionSnapshot>;
  output(executionId: string, options?: CallOptions): Promise<ExecutionOutput>;
  abort(executionId: string, options?: CallOptions): Promise<void>;
}

