/**
 * The vocabulary between the http layer and the request budget: every HTTP attempt (retries included)
 * passes a `RequestGate` before it is sent. The http layer uses it and knows nothing of who implements
 * it; the budget (`src/budget/`) implements it and `createClient` hands it in. This keeps the data flow
 * one way (runs → budget → http → fetch) while letting the budget count every real request, which a
 * wrapper around whole calls could not (it would miss retry attempts).
 */
import type { Endpoint, RequestPriority } from './endpoints.js';

/**
 * What the gate is told about a request that wants to go out.
 *
 * @example
 * ```ts
 * await gate.acquire({ endpoint: 'status', priority: 'status', key: 'we-1' }, signal);
 * ```
 */
export interface GateTicket {
  readonly endpoint: Endpoint;
  readonly priority: RequestPriority;
  /**
   * Who the request is for, so the gate can share capacity fairly: the execution id for
   * status/output/abort; for a start, the canvas id and the exact JSON body (identical starts must be
   * spaced by more than the service's 1 s duplicate window, service.md §2.2).
   */
  readonly key?: string;
}

/**
 * Rate-limit facts read off one answer (service.md §2.1; `Retry-After` only on the IP throttler, §1.3).
 *
 * @example
 * ```ts
 * if (report.rateLimit.remainingPerMinute === 0) pauseUntilNextWindow();
 * ```
 */
export interface RateLimitInfo {
  readonly limitPerMinute?: number;
  readonly remainingPerMinute?: number;
  readonly limitPerDay?: number;
  readonly remainingPerDay?: number;
  readonly retryAfterMs?: number;
}

/**
 * What the gate is told after each attempt.
 *
 * @example
 * ```ts
 * gate.report({ ticket, httpStatus: 429, rateLimit: { remainingPerMinute: 0 } });
 * ```
 */
export interface GateReport {
  readonly ticket: GateTicket;
  /** The HTTP status, or `undefined` when no answer came (network error, timeout, abort). */
  readonly httpStatus: number | undefined;
  readonly rateLimit: RateLimitInfo;
}

/**
 * The gate every attempt passes: `acquire` before sending, `report` after the answer or failure.
 *
 * @example
 * ```ts
 * const open: RequestGate = { acquire: () => Promise.resolve(), report: () => undefined };
 * ```
 */
export interface RequestGate {
  /**
   * Resolves when the request may be sent. Rejects with `signal.reason` when the signal aborts while
   * the request waits, and the queued request is dropped at once.
   */
  acquire(ticket: GateTicket, signal?: AbortSignal): Promise<void>;
  /**
   * The same wait without a Promise or an AbortSignal: `turn` is told once, `release` when the request
   * may be sent or `refuse` with the error; the function returned withdraws it while it waits (and
   * does nothing after). Optional: a gate without it is waited on through `acquire`.
   */
  wait?(ticket: GateTicket, turn: GateTurn): () => void;
  /** Called once for every attempt that `acquire` let through, when its answer (or failure) is known. */
  report(report: GateReport): void;
}

/**
 * A request waiting at a gate (`RequestGate.wait`). Either call may come before `wait` returns, or
 * from inside the gate's own step: it notes the outcome and acts on it later (in a microtask, as a
 * Promise's reaction would).
 *
 * @example
 * ```ts
 * const withdraw = gate.wait(ticket, { release: () => queueMicrotask(send), refuse: (error) => queueMicrotask(() => fail(error)) });
 * ```
 */
export interface GateTurn {
  release(): void;
  refuse(error: Error): void;
}
