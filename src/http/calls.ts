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
 * Options of a start. `withdraw` takes the start back while nothing of it is on its way: while it
 * waits for the client's request budget, or to be sent again after a refusal that started nothing
 * (a 429). The call then rejects with the signal's reason, and no execution exists. Once a request is
 * on its way `withdraw` changes nothing, since the execution may exist: the call answers as usual,
 * and `signal` still cancels it. Without a budget a start is sent at once, so only a retry's wait can
 * be withdrawn.
 *
 * @example
 * ```ts
 * const withdraw = new AbortController();
 * const started = client.executions.start('c-1', {}, { withdraw: withdraw.signal });
 * withdraw.abort(); // dropped from the budget's queue if it was still there
 * ```
 */
export interface StartOptions extends CallOptions {
  readonly withdraw?: AbortSignal;
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

