import type { ExecutionOutput, ExecutionSnapshot, StartedExecution, Variables } from '../domain/model.js';

/** The shapes of the http layer's calls: per-call options and the execution endpoints' seam. */

/**
 * Per-call options: every call can be cancelled.
 *
 * @example
 * ```ts
 * await client.executions.status(id, { signal: AbortSignal.timeout(5_000) });
 * ```
 */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

/**
 * Options of a start. `onSending` is told whether a request of the start is on its way: `true` as an
 * attempt leaves (the execution may exist from then on), `false` when that attempt failed and nothing
 * of the start is on its way any more (it waits to be sent again after a refusal that started
 * nothing, a 429, or the call is about to fail). While nothing is on its way, aborting `signal`
 * withdraws the start: no execution exists. The run layer uses it to abort a start that was sent, and
 * to withdraw one that was not.
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

