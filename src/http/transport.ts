import ky, { type KyInstance } from 'ky';
import type * as z from 'zod/mini';
import { isResponseTooLargeError, NetworkError, RedirectError, ResponseTooLargeError, TimeoutError } from '../errors/transport-errors.js';
import { unwrap } from './envelope.js';
import { priorityOf, type CallPriority, type Endpoint } from '../domain/endpoints.js';
import type { GateTicket, RequestGate } from '../domain/requests.js';
import type { ResolvedOptions } from './options.js';
import { linkSignals } from './linked-signal.js';
import { readRateLimit } from './rate-limit-headers.js';
import { withRetries } from './retrying.js';
import { createRedactor } from './key-redaction.js';
import { readBodyText } from './body-text.js';
import { PACKAGE_VERSION } from './package-version.js';

/**
 * One API call, described independently of how it is sent.
 *
 * @example
 * ```ts
 * await send({ endpoint: 'status', method: 'get', path: 'openapi/workflow/we-1/status', schema, executionId: 'we-1' });
 * ```
 */
export interface RequestSpec<T> {
  readonly endpoint: Endpoint;
  readonly method: 'get' | 'post';
  /** Relative to the base URL, without a leading slash; ids already encoded. */
  readonly path: string;
  readonly schema: z.ZodMiniType<T>;
  readonly searchParams?: Readonly<Record<string, string | number>>;
  /** The JSON body as text: exactly the bytes that were size-checked (`encodeJsonBody`) and keyed. */
  readonly json?: string;
  readonly body?: FormData;
  /** The gate's fairness key (gate.ts `GateTicket.key`). */
  readonly key?: string;
  readonly executionId?: string;
  readonly signal?: AbortSignal | undefined;
  /** The call's class in the budget, when the caller chose one (`CallOptions.priority`); else the endpoint's. */
  readonly priority?: CallPriority | undefined;
  /** When the read is due (`CallOptions.dueAt`), for the budget's order. */
  readonly dueAt?: number | undefined;
  /** Told when an attempt leaves (`true`) and when it failed, leaving nothing on its way (`false`); see `StartOptions.onSending`. */
  readonly onSending?: ((sending: boolean) => void) | undefined;
}

/**
 * Sends one described call, with retries, through the gate.
 *
 * @example
 * ```ts
 * const plan = await send({ endpoint: 'detail', method: 'get', path: 'openapi/workflows/c-1', schema: workflowPlanSchema });
 * ```
 */
export type Send = <T>(spec: RequestSpec<T>) => Promise<T>;

const USER_AGENT = `flowstream/${PACKAGE_VERSION}`;

/** Browsers own the User-Agent header; only elsewhere (Node, Deno, Bun) is it ours to set. */
function userAgentHeader(): Record<string, string> {
  return 'document' in globalThis ? {} : { 'user-agent': USER_AGENT };
}

/** Custom headers may not replace the credentials: an `Authorization` among them is dropped. */
function customHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
}

/**
 * Creates the client's one ky instance and the `send` function every resource uses. The API key
 * lives only in this closure and in the ky instance's headers, never on an object users can inspect.
 *
 * @example
 * ```ts
 * const send = createTransport(apiKey, normalizeOptions(options));
 * const plan = await send({ endpoint: 'detail', method: 'get', path: 'openapi/workflows/c-1', schema: workflowPlanSchema });
 * ```
 */
export function createTransport(apiKey: string, options: ResolvedOptions): Send {
  // The key must never appear in errors or logs: whatever the server sends is rid of it before anything reads it.
  const redact = createRedactor(apiKey);
  const http: KyInstance = ky.create({
    prefixUrl: `${options.baseUrl}/`,
    headers: { ...userAgentHeader(), ...customHeaders(options.headers), authorization: `Bearer ${apiKey}` },
    retry: 0, // retries are decided by decideRetry, driven by p-retry (retrying.ts)
    // A redirected API call is an error, never followed: fetch would carry the custom headers to the
    // other origin, turn a POST start into a GET and take that origin's answer for the start.
    redirect: 'manual',
    throwHttpErrors: false, // every answer goes through the one error factory
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  const attemptOnce = async <T>(spec: RequestSpec<T>, ticket: GateTicket, gate: RequestGate | undefined): Promise<T> => {
    // The wait for the gate ends with the call's signal: leaving then withdraws the request, unsent.
    if (gate !== undefined) await gate.acquire(ticket, spec.signal);
    const timeoutMs = options.timeouts[spec.endpoint];
    const context = { endpoint: spec.endpoint, ...(spec.executionId === undefined ? {} : { executionId: spec.executionId }) };
    // One deadline for the answer AND its body: ky's own timeout stops at the headers, so a body that
    // stalls would otherwise hang the call (and a run's polling) for ever.
    const deadline = new AbortController();
    const timer = options.scheduler.schedule(() => {
      deadline.abort();
    }, timeoutMs);
    const linked = linkSignals([spec.signal, deadline.signal]);
    const signal = linked.signal ?? deadline.signal;
    const failure = (error: unknown): Error => {
      if (spec.signal?.aborted === true) return spec.signal.reason as Error;
      if (deadline.signal.aborted) return new TimeoutError({ ...context, timeoutMs });
      // fetch's errors can quote the server: a malformed answer's bytes ride in a parser error's `data`.
      return new NetworkError({ ...context, cause: redact.error(error) });
    };
    // From here the request may reach the server: a start may exist even if this attempt fails.
    spec.onSending?.(true);
    try {
      let response: Response;
      try {
        response = await http(spec.path, {
          method: spec.method,
          timeout: false,
          signal,
          ...(spec.searchParams === undefined ? {} : { searchParams: { ...spec.searchParams } }),
          ...(spec.json === undefined ? {} : { body: spec.json, headers: { 'content-type': 'application/json' } }),
          ...(spec.body === undefined ? {} : { body: spec.body }),
        });
      } catch (error) {
        gate?.report({ ticket, httpStatus: undefined, rateLimit: {} });
        throw failure(error);
      }
      const rateLimit = readRateLimit(response.headers, options.scheduler.now());
      gate?.report({ ticket, httpStatus: response.status, rateLimit });
      // Node's fetch hands back the 3xx itself; a browser's, an opaque redirect with status 0.
      if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
        await response.body?.cancel().catch(() => undefined);
        throw new RedirectError({ ...context, status: response.status, location: redact.text(response.headers.get('location') ?? '') });
      }
      let text: string;
      try {
        text = await readBodyText(response, options.maxResponseBytes, () => new ResponseTooLargeError({ ...context, maxBytes: options.maxResponseBytes }));
      } catch (error) {
        if (isResponseTooLargeError(error)) throw error;
        throw failure(error); // the connection dropped, or the deadline passed, mid-body
      }
      return unwrap({ ...context, status: response.status, text, rateLimit }, spec.schema, redact);
    } catch (error) {
      spec.onSending?.(false);
      throw error;
    } finally {
      timer.unsubscribe();
      linked.unlink();
    }
  };

  return <T>(spec: RequestSpec<T>): Promise<T> => {
    const ticket: GateTicket = {
      endpoint: spec.endpoint,
      priority: spec.priority ?? priorityOf(spec.endpoint),
      ...(spec.key === undefined ? {} : { key: spec.key }),
      ...(spec.dueAt === undefined ? {} : { dueAt: spec.dueAt }),
    };
    return withRetries(() => attemptOnce(spec, ticket, options.gate), {
      endpoint: spec.endpoint,
      policy: options.retry,
      gated: options.gate !== undefined,
      signal: spec.signal,
      logger: options.logger,
      scheduler: options.scheduler,
    });
  };
}
