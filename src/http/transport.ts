import ky, { type KyInstance } from 'ky';
import { defer, map, Observable, type Observer, type SchedulerLike, type Subscriber, type Subscription, type TeardownLogic, type Unsubscribable } from 'rxjs';
import type * as z from 'zod/mini';
import { errorFromAnswer, type FailureBody } from '../errors/error-factory.js';
import { isApiError, isRateLimitError, isServerError } from '../errors/api-errors.js';
import { isNetworkError, isResponseTooLargeError, isTimeoutError, NetworkError, RedirectError, ResponseTooLargeError, TimeoutError } from '../errors/transport-errors.js';
import { InvalidArgumentError, isResponseValidationError, objectArgument, ResponseValidationError } from '../errors/validation-errors.js';
import { CALL_PRIORITIES, isRepeatable, priorityOf, type CallPriority, type Endpoint } from '../domain/endpoints.js';
import type { Logger } from '../domain/model.js';
import type { RetryOptions } from '../domain/options.js';
import type { GateTicket, GateTurn, RateLimitInfo, RequestGate } from '../domain/requests.js';
import type { RequestTelemetry, RequestTelemetryHook } from '../domain/telemetry.js';
import type { CallOptions } from './calls.js';
import { createRedactor, type Redactor } from './key-redaction.js';
import type { ResolvedOptions } from './options.js';
import { PACKAGE_VERSION } from './package-version.js';
import { parseContext } from './schemas.js';

/**
 * The request path: every call goes validate → retry → budget → deadline → fetch → unwrap, each stage
 * a small function over an Observable, composed in `createTransport`. A call is one subscription:
 * unsubscribing (or aborting the call's signal) stops it wherever it is — waiting in the budget,
 * between attempts, on the wire or reading the body — and leaves no timer or listener behind.
 */

/**
 * One API call, described independently of how it is sent.
 *
 * @example
 * ```ts
 * transport.call(options, () => ({ endpoint: 'status', method: 'get', path: 'openapi/workflow/we-1/status', schema, executionId: 'we-1' }));
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
  /** Who the request is for, in the budget (`GateTicket.key`). */
  readonly key?: string;
  readonly executionId?: string;
  /** The call's class in the budget, when the caller chose one (`CallOptions.priority`); else the endpoint's. */
  readonly priority?: CallPriority | undefined;
  /** Told when an attempt leaves (`true`) and when it failed, leaving nothing on its way (`false`); see `StartOptions.onSending`. */
  readonly onSending?: ((sending: boolean) => void) | undefined;
  /** The parent of the call's telemetry (`CallOptions.telemetryParent`). */
  readonly telemetryParent?: unknown;
}

/**
 * The client's request path, as an Observable and as a Promise.
 *
 * @example
 * ```ts
 * const plan = await transport.call(options, () => ({ endpoint: 'detail', method: 'get', path: 'openapi/workflows/c-1', schema: workflowPlanSchema }));
 * ```
 */
export interface Transport {
  /** One call per subscription; `describe` runs (and checks its arguments) on subscription. */
  readonly request: <T>(describe: () => RequestSpec<T>) => Observable<T>;
  /** One call, its options checked; aborting `options.signal` rejects with the signal's reason. */
  readonly call: <T>(options: CallOptions | undefined, describe: () => RequestSpec<T>) => Promise<T>;
}

/** A request's telemetry observer and what its attempts count for it. */
interface Traced {
  readonly observer: RequestTelemetry;
  readonly tally: RequestTally;
}

/** One answer, read to its end: status, rate-limit headers and the body as text (the key not yet removed). */
export interface Answer {
  readonly status: number;
  readonly rateLimit: RateLimitInfo;
  readonly text: string;
  /** Set for a redirect, which is refused, its body unread (`''` when it names no place). */
  readonly location?: string;
}

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
 * A call's options, checked: its signal, and its class in the budget. A priority outside
 * {@link CALL_PRIORITIES} (`'abort'` from plain JavaScript, say) is an `InvalidArgumentError`: the
 * classes above are earned by the endpoint, not asked for.
 */
function callOptions(options: CallOptions | undefined): { readonly signal: AbortSignal | undefined; readonly priority: CallPriority | undefined; readonly telemetryParent: unknown } {
  const { signal, priority, telemetryParent } = objectArgument('options', options);
  const given: unknown = priority;
  if (given !== undefined && !(CALL_PRIORITIES as readonly unknown[]).includes(given)) {
    throw new InvalidArgumentError('options.priority', `must be one of ${CALL_PRIORITIES.join(', ')} (got ${typeof given === 'string' ? given : typeof given})`);
  }
  return { signal, priority, telemetryParent };
}

/** What the budget is told of a request. */
function ticketOf(spec: RequestSpec<unknown>): GateTicket {
  const { endpoint, key } = spec;
  const priority = spec.priority ?? priorityOf(endpoint);
  // Built whole, not spread: every request makes one, every run's next read holds one while it waits.
  return key === undefined ? { endpoint, priority } : { endpoint, priority, key };
}

/** What every error of a call carries. */
function contextOf(spec: RequestSpec<unknown>): { readonly endpoint: Endpoint; readonly executionId?: string } {
  return { endpoint: spec.endpoint, ...(spec.executionId === undefined ? {} : { executionId: spec.executionId }) };
}

/**
 * What a request did, counted for its telemetry while it goes: only made when the client has a
 * telemetry hook, so a client without one counts nothing.
 */
class RequestTally {
  retries = 0;
  budgetWaitMs = 0;
  rateLimited = 0;
  status: number | undefined;

  answered(status: number): void {
    this.status = status;
    if (status === 429) this.rateLimited += 1;
  }
}

// --- reading an answer -------------------------------------------------------------------------------

/** A count is a plain decimal integer; `0x0`, `0.5`, `12abc`, `-1` or `1e3` say nothing we can trust. */
const COUNT = /^\d{1,15}$/u;
/** Delta-seconds (RFC 9110 §10.2.3), also in the decimal or exponent forms some servers write. */
const SECONDS = /^\d+(?:\.\d+)?(?:[eE]\+?\d+)?$/u;
/** IMF-fixdate, the one date form senders must generate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`. */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/u;

function count(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name)?.trim();
  return raw !== undefined && COUNT.test(raw) ? Number(raw) : undefined;
}

/**
 * `Retry-After` in ms: seconds or an HTTP date, never below 0 and never above the largest exact
 * number, so `1e308` or a date in the year 9999 reads as "longer than any wait" rather than as
 * Infinity; whoever waits compares it with what it accepts (`retry.maxWaitMs`) and bounds its timers.
 */
function retryAfterMs(headers: Headers, now: number): number | undefined {
  const raw = headers.get('retry-after')?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (SECONDS.test(raw)) return Math.min(Number(raw) * 1000, Number.MAX_SAFE_INTEGER);
  if (!HTTP_DATE.test(raw)) return undefined;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - now), Number.MAX_SAFE_INTEGER);
}

/**
 * Reads the rate-limit facts of one answer: the four `X-RateLimit-*` counters the service sends past
 * auth (service.md §2.1) and `Retry-After`, which only the IP throttler sends (§1.3). Parsed strictly:
 * a value that does not parse is left out, as if the header were absent, so a garbled header can never
 * stall requests.
 *
 * @example
 * ```ts
 * readRateLimit(response.headers).remainingPerMinute; // 42, or undefined when the header is absent or garbled
 * ```
 */
export function readRateLimit(headers: Headers, now: number = Date.now()): RateLimitInfo {
  const entries = {
    limitPerMinute: count(headers, 'x-ratelimit-limit-rpm'),
    remainingPerMinute: count(headers, 'x-ratelimit-remaining-rpm'),
    limitPerDay: count(headers, 'x-ratelimit-limit-daily'),
    remainingPerDay: count(headers, 'x-ratelimit-remaining-daily'),
    retryAfterMs: retryAfterMs(headers, now),
  };
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));
}

/**
 * Reads a body as text, decoded (the fetch has already undone any gzip), counting as it goes: past
 * `maxBytes` the stream is cancelled and `tooLarge()` thrown, so no more than `maxBytes` plus one chunk
 * is ever held, however much the body would inflate to.
 */
async function readBodyText(response: Response, maxBytes: number, tooLarge: () => Error): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** Node's fetch hands back the 3xx itself; a browser's, an opaque redirect with status 0. */
function isRedirect(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
}

// --- unwrapping an answer -----------------------------------------------------------------------------

/**
 * The body parsed, then rid of the key: parsing first undoes the JSON escapes a key may hide behind
 * (`rf_\u0053…`), and every string and property name of the value is cleaned, data included, since
 * any of it may reach an error (`errMsg`, a node's `errorMessage` in `WorkflowFailedError`) or a log.
 */
function parseBody(text: string, redact: Redactor): FailureBody {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { kind: 'text', text: redact.text(text) };
  }
  return { kind: 'json', value: redact.json(value) };
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Turns an answer into the endpoint's data or the one error that describes it, with the API key
 * removed from all of it by `redact`. A redirect is refused, never followed. The envelope's `success`
 * decides, not only the HTTP status: business errors come as HTTP 200 (service.md §1.2).
 *
 * @example
 * ```ts
 * const plan = unwrap({ status: 200, rateLimit: {}, text: '{"success":true,"data":{"tasks":[]}}' }, { endpoint: 'detail', schema: workflowPlanSchema }, redact);
 * ```
 */
export function unwrap<T>(answer: Answer, spec: Pick<RequestSpec<T>, 'endpoint' | 'executionId' | 'schema'>, redact: Redactor): T {
  const context = { endpoint: spec.endpoint, ...(spec.executionId === undefined ? {} : { executionId: spec.executionId }) };
  if (answer.location !== undefined) throw new RedirectError({ ...context, status: answer.status, location: redact.text(answer.location) });
  const body = parseBody(answer.text, redact);
  const envelope = body.kind === 'json' && isRecord(body.value) ? body.value : undefined;
  const ok = answer.status >= 200 && answer.status < 300;
  if (!ok || envelope?.['success'] === false) throw errorFromAnswer({ ...context, status: answer.status, body, rateLimit: answer.rateLimit });
  if (body.kind === 'text') throw new ResponseValidationError({ ...context, reason: 'not-json' });
  if (envelope?.['success'] !== true) {
    throw new ResponseValidationError({ ...context, reason: 'schema', issues: [{ path: ['success'], message: 'expected the envelope {"success":true,"data":…}' }] });
  }
  const parsed = spec.schema.safeParse(envelope['data'], parseContext);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: ['data', ...issue.path], message: issue.message, code: issue.code }));
    throw new ResponseValidationError({ ...context, reason: 'schema', issues });
  }
  return parsed.data;
}

// --- deciding a retry ----------------------------------------------------------------------------------

/** A run must wait past the duplicate window before its identical retry (service.md §2.2). */
const DUPLICATE_WINDOW_MS = 1_100;

/** Everything the decision depends on; `random` ∈ [0, 1) is passed in so the function stays pure. */
export interface RetryInput {
  readonly endpoint: Endpoint;
  /** Attempts made so far, the failed one included (1 after the first failure). */
  readonly attempt: number;
  readonly error: unknown;
  readonly policy: Required<RetryOptions>;
  readonly random: number;
  /**
   * Whether a request gate (the client's budget) holds every request after a 429 until the window can
   * have reset. Then the retry itself need not wait for the window: waiting here too doubled the pause.
   */
  readonly gated?: boolean;
}

/** Retry after `delayMs`, or stop; `reason` names the rule that decided (for logs). */
export type RetryDecision =
  | { readonly retry: false; readonly reason: string }
  | { readonly retry: true; readonly delayMs: number; readonly reason: string };

/** Exponential backoff with "equal jitter": half the step is fixed, half random, capped at `maxDelayMs`. */
function backoff(input: RetryInput): number {
  const step = Math.min(input.policy.maxDelayMs, input.policy.baseDelayMs * 2 ** (input.attempt - 1));
  return Math.round(step / 2 + (input.random * step) / 2);
}

function waitFor(delayMs: number, input: RetryInput, reason: string): RetryDecision {
  if (delayMs > input.policy.maxWaitMs) return { retry: false, reason: `server asks to wait ${delayMs} ms, over maxWaitMs` };
  return { retry: true, delayMs, reason };
}

/**
 * Decides whether a failed attempt is tried again, and after how long. The rules are checked in
 * order; the first that applies decides. Server timing wins over our own backoff (as in ky).
 */
export function decideRetry(input: RetryInput): RetryDecision {
  const { error, endpoint } = input;
  // 1. The budget of retries is spent: the last error is the caller's.
  if (input.attempt > input.policy.retries) return { retry: false, reason: 'retries exhausted' };
  // 2. Rate limited. The request was refused, not executed, so even a start may go again — after the
  //    window: `Retry-After` when the IP throttler sent it (service.md §1.3), else a full fixed window,
  //    since the account limiter sends no reset time (§2.1). With a gate, the gate keeps that wait for
  //    every request at once, so the retry only queues behind it. A spent daily budget will not reset soon.
  if (isRateLimitError(error)) {
    if (error.rateLimit.remainingPerDay === 0) return { retry: false, reason: 'daily limit reached' };
    // A server asking for more than the caller accepts gets its error surfaced at once, with or
    // without a gate: behind one the wait would otherwise sit in the gate's queue instead.
    const asked = error.rateLimit.retryAfterMs;
    if (asked !== undefined && asked > input.policy.maxWaitMs) return { retry: false, reason: `server asks to wait ${asked} ms, over maxWaitMs` };
    const window = input.gated === true ? 0 : (asked ?? input.policy.rateLimitWaitMs);
    // Behind a gate the budget spaces identical starts itself (budget/duplicate-starts.ts).
    const delayMs = endpoint === 'run' && input.gated !== true ? Math.max(window, DUPLICATE_WINDOW_MS) : window;
    return waitFor(delayMs, input, 'rate limited');
  }
  // 3. Anything else may have reached the server: only repeatable requests go again (service.md §2.2),
  //    and a start whose connection was never made (refused, no such host), which reached nothing.
  if (!isRepeatable(endpoint) && !neverConnected(error)) return { retry: false, reason: `${endpoint} is not repeatable` };
  // 4. No answer: the connection failed or timed out.
  if (isNetworkError(error)) return { retry: true, delayMs: backoff(input), reason: 'network' };
  if (isTimeoutError(error)) return { retry: true, delayMs: backoff(input), reason: 'timeout' };
  // 5. The server failed (5xx, E0000); honour its Retry-After when it sent one.
  if (isServerError(error)) {
    return error.retryAfterMs === undefined ? { retry: true, delayMs: backoff(input), reason: 'server error' } : waitFor(error.retryAfterMs, input, 'server error');
  }
  // 6. A body that is not JSON at all is a broken transfer, not a schema change: worth one more look.
  if (isResponseValidationError(error) && error.reason === 'not-json') return { retry: true, delayMs: backoff(input), reason: 'unreadable body' };
  // 7. Everything else (4xx, not found, schema mismatch, bad arguments) fails the same way again.
  return { retry: false, reason: 'not retryable' };
}

function neverConnected(error: unknown): boolean {
  return isNetworkError(error) && !error.connected;
}

/**
 * Whether a failed start surely started nothing: the service answered it with a refusal (a 4xx or a
 * business error that is not its own failure: a 429, an unknown canvas, the duplicate guard of
 * service.md §2.2), or its connection was never made. No answer (a timeout, a connection lost on the
 * way), a 5xx or an unreadable answer may come from a service that started the execution: in doubt.
 */
export function startedNothing(error: unknown): boolean {
  return (isApiError(error) && !isServerError(error)) || neverConnected(error);
}

// --- the stages ---------------------------------------------------------------------------------------

/**
 * Creates the client's one ky instance and its request path. The API key lives only in this closure
 * and in the ky instance's headers, never on an object users can inspect.
 *
 * @example
 * ```ts
 * const transport = createTransport(apiKey, normalizeOptions(options));
 * const plan = await transport.call(undefined, () => ({ endpoint: 'detail', method: 'get', path: 'openapi/workflows/c-1', schema: workflowPlanSchema }));
 * ```
 */
export function createTransport(apiKey: string, options: ResolvedOptions): Transport {
  const { gate, scheduler, logger, telemetry } = options;
  // The key must never appear in errors or logs: whatever the server sends is rid of it before anything reads it.
  const redact = createRedactor(apiKey);
  const http: KyInstance = ky.create({
    prefixUrl: `${options.baseUrl}/`,
    headers: { ...userAgentHeader(), ...customHeaders(options.headers), authorization: `Bearer ${apiKey}` },
    retry: 0, // retries are the retry stage's
    timeout: false, // the deadline stage's, which covers the body too
    // A redirected API call is an error, never followed: fetch would carry the custom headers to the
    // other origin, turn a POST start into a GET and take that origin's answer for the start.
    redirect: 'manual',
    throwHttpErrors: false, // every answer goes through the one error factory
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  /** One HTTP exchange, its body read within `maxResponseBytes`. */
  const exchange = async (spec: RequestSpec<unknown>, signal: AbortSignal, extraHeaders: Readonly<Record<string, string>> | undefined): Promise<Answer> => {
    const contentType = spec.json === undefined ? undefined : { 'content-type': 'application/json' };
    const headers = extraHeaders === undefined ? contentType : { ...extraHeaders, ...contentType };
    const response = await http(spec.path, {
      method: spec.method,
      signal,
      ...(spec.searchParams === undefined ? {} : { searchParams: { ...spec.searchParams } }),
      ...(headers === undefined ? {} : { headers }),
      ...(spec.json === undefined ? {} : { body: spec.json }),
      ...(spec.body === undefined ? {} : { body: spec.body }),
    });
    const rateLimit = readRateLimit(response.headers, scheduler.now());
    if (isRedirect(response)) {
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, rateLimit, text: '', location: response.headers.get('location') ?? '' };
    }
    const tooLarge = (): Error => new ResponseTooLargeError({ ...contextOf(spec), maxBytes: options.maxResponseBytes });
    return { status: response.status, rateLimit, text: await readBodyText(response, options.maxResponseBytes, tooLarge) };
  };

  /** fetch: one exchange per subscription; unsubscribing aborts it, headers or body. */
  const fetchAnswer = (spec: RequestSpec<unknown>, traced?: Traced): Observable<Answer> =>
    new Observable<Answer>((subscriber) => {
      const controller = new AbortController();
      let settled = false;
      exchange(spec, controller.signal, traced?.observer.headers).then(
        (answer) => {
          settled = true;
          traced?.tally.answered(answer.status);
          subscriber.next(answer);
          subscriber.complete();
        },
        (error: unknown) => {
          settled = true;
          // fetch's errors can quote the server: a malformed answer's bytes ride in a parser error's `data`.
          subscriber.error(isResponseTooLargeError(error) ? error : new NetworkError({ ...contextOf(spec), cause: redact.error(error) }));
        },
      );
      return () => {
        if (!settled) controller.abort();
      };
    });

  /**
   * deadline: the endpoint's timeout covers the answer AND its body (a body that stalls would
   * otherwise hang the call, and a run's polling, for ever); when it passes, the exchange is aborted.
   */
  const deadline = (spec: RequestSpec<unknown>, attempt: Observable<Answer>): Observable<Answer> =>
    new Observable<Answer>((subscriber) => {
      const timeoutMs = options.timeouts[spec.endpoint];
      // The timer is set first, as the exchange may answer at once (its `next` then clears it); it fires
      // on the scheduler, always after this function, so the exchange it stops exists by then.
      const timer = scheduler.schedule(() => {
        exchange.unsubscribe();
        subscriber.error(new TimeoutError({ ...contextOf(spec), timeoutMs }));
      }, timeoutMs);
      const exchange = attempt.subscribe({
        next: (answer) => {
          timer.unsubscribe();
          subscriber.next(answer);
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          subscriber.complete();
        },
      });
      return () => {
        timer.unsubscribe();
        exchange.unsubscribe();
      };
    });

  /** One attempt's exchange: fetched within the endpoint's deadline. */
  const send = (spec: RequestSpec<unknown>, traced: Traced | undefined): Observable<Answer> => deadline(spec, fetchAnswer(spec, traced));

  /** unwrap: the answer as the endpoint's data, or its error, rid of the key. */
  const read = <T>(answer: Answer, spec: RequestSpec<T>): T => unwrap(answer, spec, redact);

  /**
   * budget: every attempt, retries included, waits for the gate and tells it its outcome: the answer's
   * status and rate-limit headers, or no status when no whole answer came (a failure, the deadline,
   * an unsubscription). Leaving while it waits withdraws the request, unsent. `exchange` is the
   * attempt's exchange: {@link send}, or a start's, which tells `onSending`.
   */
  const budget = <T>(spec: RequestSpec<T>, observer: AttemptObserver<T>, traced: Traced | undefined, exchange: Exchange = send): Unsubscribable => {
    if (gate === undefined) return exchange(spec, traced).pipe(map((answer) => read(answer, spec))).subscribe(observer);
    // The exchange is made once granted, and the answer read here rather than by an operator after
    // this stage: a request waiting in the budget (every run's next read) holds neither.
    return new GateWait(gate, ticketOf(spec), spec, traced, observer, exchange, read, scheduler);
  };

  /**
   * One attempt: through the budget, within the deadline, fetched, unwrapped. For a start, `onSending`
   * hears `true` as the exchange begins (from then on the execution may exist, even if the attempt
   * fails) and `false` when that attempt failed having surely started nothing ({@link startedNothing}).
   * An attempt that failed in doubt (its deadline passed, its answer lost) leaves it `true`: the
   * execution may exist.
   */
  const attempt = <T>(spec: RequestSpec<T>, observer: AttemptObserver<T>, traced: Traced | undefined): Unsubscribable => {
    const { onSending } = spec;
    if (onSending === undefined) return budget(spec, observer, traced);
    let sent = false;
    const exchange: Exchange = () =>
      defer(() => {
        sent = true;
        onSending(true);
        return send(spec, traced);
      });
    const told: AttemptObserver<T> = {
      get closed() {
        return observer.closed;
      },
      next: (value) => {
        observer.next(value);
      },
      error: (error) => {
        if (sent && startedNothing(error)) onSending(false);
        observer.error(error);
      },
      complete: () => {
        observer.complete();
      },
    };
    return budget(spec, told, traced, exchange);
  };

  /** What every request's retry stage ({@link Retrying}) shares. */
  const path: RetryPath = { attempt, policy: options.retry, gated: gate !== undefined, scheduler, logger };

  /**
   * telemetry: the hook hears of the call as it is made and once as it ends — with data, an error, or
   * left — with what the attempts counted on their way (answers, budget waits, retries).
   */
  const observed = <T>(spec: RequestSpec<T>, hook: RequestTelemetryHook, subscriber: Subscriber<T>): TeardownLogic => {
    const priority = ticketOf(spec).priority;
    const observer = hook.request({
      endpoint: spec.endpoint,
      method: spec.method === 'get' ? 'GET' : 'POST',
      priority,
      ...(spec.executionId === undefined ? {} : { executionId: spec.executionId }),
      ...(spec.telemetryParent === undefined ? {} : { parent: spec.telemetryParent }),
      at: scheduler.now(),
    });
    const tally = new RequestTally();
    let ended = false;
    const end = (outcome: 'ok' | 'error' | 'cancelled', error?: unknown): void => {
      if (ended) return;
      ended = true;
      const { retries, budgetWaitMs, rateLimited, status } = tally;
      observer.end({ at: scheduler.now(), outcome, retries, budgetWaitMs, rateLimited, ...(status === undefined ? {} : { status }), ...(outcome === 'error' ? { error } : {}) });
    };
    const retrying = new Retrying(
      path,
      spec,
      {
        next: (value) => {
          end('ok');
          subscriber.next(value);
        },
        error: (error: unknown) => {
          end('error', error);
          subscriber.error(error);
        },
        complete: () => {
          subscriber.complete();
        },
      },
      { observer, tally },
    );
    return () => {
      retrying.unsubscribe();
      end('cancelled');
    };
  };

  /**
   * The stages, in order: validate (the call described, its arguments checked, on subscription) →
   * telemetry → retry → one attempt (budget → deadline → fetch → unwrap). A request without telemetry
   * is its subscriber and one {@link Retrying}: no operator chain per subscription.
   */
  const request = <T>(describe: () => RequestSpec<T>): Observable<T> =>
    new Observable<T>((subscriber) => {
      const spec = describe();
      return telemetry === undefined ? new Retrying(path, spec, subscriber, undefined) : observed(spec, telemetry, subscriber);
    });

  /** A call as a Promise: the first value of its request, the call's signal unsubscribing it. */
  const call = <T>(given: CallOptions | undefined, describe: () => RequestSpec<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const { signal, priority, telemetryParent } = callOptions(given);
      // An abort rejects with the caller's reason, whatever it is (not always an Error).
      if (signal?.aborted === true) {
        reject(signal.reason as Error);
        return;
      }
      const pending = new PendingCall<T>(signal, resolve, reject);
      const described = priority === undefined && telemetryParent === undefined ? describe : () => ({ ...describe(), priority, telemetryParent });
      pending.subscription = request(described).subscribe(pending);
      if (!pending.subscription.closed) signal?.addEventListener('abort', pending, ONCE);
    });

  return { request, call };
}

const ONCE: AddEventListenerOptions = { once: true };

/** One attempt's exchange of a request: its answer, read to its end, within the deadline. */
type Exchange = (spec: RequestSpec<unknown>, traced: Traced | undefined) => Observable<Answer>;

/** What hears one attempt: its value, its failure or its end; `closed` once nobody waits for it any more. */
interface AttemptObserver<T> {
  readonly closed: boolean;
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

/** What every request's retry stage of one transport shares: how an attempt is made, and the rules of another. */
interface RetryPath {
  readonly attempt: <T>(spec: RequestSpec<T>, observer: AttemptObserver<T>, traced: Traced | undefined) => Unsubscribable;
  readonly policy: Required<RetryOptions>;
  /** Whether a gate holds every request after a 429 ({@link RetryInput.gated}). */
  readonly gated: boolean;
  readonly scheduler: SchedulerLike;
  readonly logger: Logger | undefined;
}

/**
 * retry: one request's attempts, as one object. It makes an attempt and hears it; a failed attempt
 * goes again when {@link decideRetry} says so, after its delay on the client's clock, otherwise its
 * error is the request's. It is the attempts' observer and the request's teardown, so that a request
 * waiting in the budget holds it and its subscriber, not an operator chain.
 */
class Retrying<T> implements AttemptObserver<T>, Unsubscribable {
  /** Attempts that failed so far. */
  #failed = 0;
  /** Whether the current attempt is still heard: not once it failed or ended, or the request left. */
  #live = false;
  #current: Unsubscribable | undefined;
  #pause: Subscription | undefined;

  constructor(
    private readonly path: RetryPath,
    private readonly spec: RequestSpec<T>,
    private readonly destination: Observer<T>,
    private readonly traced: Traced | undefined,
  ) {
    this.#try();
  }

  get closed(): boolean {
    return !this.#live;
  }

  next(value: T): void {
    if (this.#live) this.destination.next(value);
  }

  error(error: unknown): void {
    if (!this.#live) return;
    this.#live = false;
    this.#current?.unsubscribe();
    this.#current = undefined;
    this.#failed += 1;
    const { spec, path, traced } = this;
    const decision = decideRetry({ endpoint: spec.endpoint, attempt: this.#failed, error, policy: path.policy, random: Math.random(), gated: path.gated });
    if (!decision.retry) {
      this.destination.error(error);
      return;
    }
    if (traced !== undefined) traced.tally.retries += 1;
    path.logger?.debug?.(`flowstream: retrying ${spec.endpoint} in ${decision.delayMs} ms (${decision.reason})`, { endpoint: spec.endpoint, attempt: this.#failed });
    this.#pause = path.scheduler.schedule(() => {
      this.#pause = undefined;
      this.#try();
    }, decision.delayMs);
  }

  complete(): void {
    if (!this.#live) return;
    this.#live = false;
    this.destination.complete();
  }

  unsubscribe(): void {
    this.#live = false;
    this.#current?.unsubscribe();
    this.#current = undefined;
    this.#pause?.unsubscribe();
    this.#pause = undefined;
  }

  #try(): void {
    const failed = this.#failed;
    this.#live = true;
    const current = this.path.attempt(this.spec, this, this.traced);
    // An attempt that failed while it was being made is already done with (and maybe made again).
    if (this.#failed === failed && !this.closed) this.#current = current;
    else current.unsubscribe();
  }
}

/**
 * One attempt's passage through the budget, as one object: the turn the gate tells, then the exchange
 * once granted, and the teardown of its subscription. It tells the gate the attempt's outcome: the
 * answer's status and rate-limit headers, or no status when no whole answer came (a failure, the
 * deadline, an unsubscription); leaving while it waits withdraws the request, unsent. Through the
 * gate's `wait` when it has one, a request waiting (every run's next read) holds this object and no
 * Promise, AbortController or closure of its own, and leaving fires no abort event.
 */
class GateWait<T> implements GateTurn, Unsubscribable {
  #granted = false;
  #reported = false;
  #sending: Subscription | undefined;
  readonly #askedAt: number;
  readonly #leave: () => void;

  constructor(
    private readonly gate: RequestGate,
    private readonly ticket: GateTicket,
    private readonly spec: RequestSpec<T>,
    private readonly traced: Traced | undefined,
    private readonly observer: AttemptObserver<T>,
    private readonly exchange: Exchange,
    private readonly read: (answer: Answer, spec: RequestSpec<T>) => T,
    private readonly scheduler: SchedulerLike,
  ) {
    this.#askedAt = traced === undefined ? 0 : scheduler.now();
    if (gate.wait !== undefined) {
      this.#leave = gate.wait(ticket, this);
      return;
    }
    const waiting = new AbortController();
    gate.acquire(ticket, waiting.signal).then(
      () => {
        this.#send();
      },
      (error: unknown) => {
        observer.error(error);
      },
    );
    this.#leave = () => {
      waiting.abort();
    };
  }

  /** The gate's grant: the attempt goes in a microtask, as a Promise's reaction would (the gate may be mid-step). */
  release(): void {
    queueMicrotask(() => {
      this.#send();
    });
  }

  refuse(error: Error): void {
    queueMicrotask(() => {
      this.observer.error(error);
    });
  }

  unsubscribe(): void {
    if (!this.#granted) this.#leave();
    this.#sending?.unsubscribe();
    if (this.#granted) this.#report();
  }

  #report(answer?: Answer): void {
    if (this.#reported) return;
    this.#reported = true;
    this.gate.report({ ticket: this.ticket, httpStatus: answer?.status, rateLimit: answer?.rateLimit ?? {} });
  }

  #send(): void {
    this.#granted = true;
    const { observer, traced } = this;
    if (traced !== undefined) traced.tally.budgetWaitMs += this.scheduler.now() - this.#askedAt;
    if (observer.closed) {
      this.#report();
      return;
    }
    this.#sending = this.exchange(this.spec, traced).subscribe({
      next: (answer) => {
        this.#report(answer);
        let value: T;
        try {
          value = this.read(answer, this.spec);
        } catch (error: unknown) {
          observer.error(error);
          return;
        }
        observer.next(value);
      },
      error: (error: unknown) => {
        this.#report();
        observer.error(error);
      },
      complete: () => {
        observer.complete();
      },
    });
  }
}

/**
 * A call as a Promise while its request is on its way: the request's observer and the listener of the
 * call's signal in one object (a run's next read waits in the budget holding it), not a closure each.
 */
class PendingCall<T> {
  subscription: Subscription | undefined;

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (value: T) => void,
    private readonly reject: (reason: unknown) => void,
  ) {}

  /** The call's signal aborted: the request stops, and the call rejects with the signal's reason. */
  handleEvent(): void {
    this.subscription?.unsubscribe();
    this.reject(this.signal?.reason);
  }

  next(value: T): void {
    this.signal?.removeEventListener('abort', this);
    this.resolve(value);
  }

  error(error: unknown): void {
    this.signal?.removeEventListener('abort', this);
    this.reject(error);
  }
}
