import ky, { type KyInstance } from 'ky';
import { Observable, Subscription, type Observer, type SchedulerLike, type SubscriptionLike, type TeardownLogic, type Unsubscribable } from 'rxjs';
import { errorFromAnswer, type FailureBody } from '../errors/error-factory.js';
import { isApiError, isRateLimitError, isServerError } from '../errors/api-errors.js';
import { isNetworkError, isResponseTooLargeError, isTimeoutError, NetworkError, RedirectError, ResponseTooLargeError, TimeoutError } from '../errors/transport-errors.js';
import { abortSignalArgument, isRecord, isResponseValidationError, objectArgument, oneOf, ResponseValidationError } from '../errors/validation-errors.js';
import { CALL_PRIORITIES, ENDPOINTS, isRepeatable, priorityOf, type CallPriority, type Endpoint, type RequestPriority } from '../domain/endpoints.js';
import type { RetryOptions } from '../domain/options.js';
import type { GateTicket, GateTurn, RateLimitInfo, RequestGate } from '../domain/requests.js';
import type { RequestTelemetry, RequestTelemetryEnd } from '../domain/telemetry.js';
import { present } from '../domain/present.js';
import type { CallOptions } from './calls.js';
import { createRedactor, type Redactor } from './key-redaction.js';
import type { ResolvedOptions } from './options.js';
import { PACKAGE_VERSION } from './package-version.js';
import { parseContext, type DataSchema } from './schemas.js';

/**
 * The request path: every call goes down small stages, each an Observable subscribed to the one below
 * — validate → telemetry → retry → unwrap → budget → deadline → fetch — and its answer comes back up
 * through them, unwrapped into the endpoint's data or its error. A call is one subscription:
 * unsubscribing (or aborting the call's signal) stops it wherever it is — waiting in the budget,
 * between attempts, on the wire or reading the body — and leaves no timer or listener behind.
 */

/**
 * One API call, described independently of how it is sent.
 *
 * @example
 * ```ts
 * transport.call(options, () => ({ endpoint: 'status', path: 'openapi/workflow/we-1/status', schema, executionId: 'we-1' }));
 * ```
 */
export interface RequestSpec<T> {
  /** The endpoint, whose row of the endpoint table gives the method, class, timeout and whether a retry is safe. */
  readonly endpoint: Endpoint;
  /** Relative to the base URL, without a leading slash; ids already encoded. */
  readonly path: string;
  readonly schema: DataSchema<T>;
  readonly searchParams?: Readonly<Record<string, string | number>>;
  /** JSON text (exactly the bytes that were size-checked by `encodeJsonBody`, and keyed), or an upload's form. */
  readonly body?: string | FormData;
  /** Who the request is for, in the budget (`GateTicket.key`). */
  readonly key?: string;
  readonly executionId?: string;
  /** Told when an attempt leaves (`true`) and when it failed, leaving nothing on its way (`false`); see `StartOptions.onSending`. */
  readonly onSending?: ((sending: boolean) => void) | undefined;
}

/**
 * Where a request goes in the budget and in telemetry, when its caller says (`CallOptions`): its
 * class instead of its endpoint's, and the parent of its telemetry.
 *
 * @example
 * ```ts
 * transport.request(describe, { priority: 'interactive' });
 * ```
 */
export interface Placement {
  readonly priority?: CallPriority | undefined;
  readonly telemetryParent?: unknown;
}

/**
 * The client's request path, as an Observable and as a Promise.
 *
 * @example
 * ```ts
 * const plan = await transport.call(options, () => ({ endpoint: 'detail', path: 'openapi/workflows/c-1', schema: workflowPlanSchema }));
 * ```
 */
export interface Transport {
  /** One call per subscription; `describe` runs (and checks its arguments) on subscription. */
  readonly request: <T>(describe: () => RequestSpec<T>, placement?: Placement) => Observable<T>;
  /** One call, its options checked; aborting `options.signal` rejects with the signal's reason. */
  readonly call: <T>(options: CallOptions | undefined, describe: () => RequestSpec<T>) => Promise<T>;
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

/**
 * A call's options, checked: its signal, and its class in the budget. A priority outside
 * {@link CALL_PRIORITIES} (`'abort'` from plain JavaScript, say) is an `InvalidArgumentError`: the
 * classes above are earned by the endpoint, not asked for.
 */
function callOptions(options: CallOptions | undefined): { readonly signal: AbortSignal | undefined; readonly priority: CallPriority | undefined; readonly telemetryParent: unknown } {
  const { signal, priority, telemetryParent } = objectArgument('options', options);
  return { signal: abortSignalArgument('options.signal', signal), priority: priority === undefined ? undefined : oneOf('options.priority', priority, CALL_PRIORITIES), telemetryParent };
}

/** What every error of a call carries. */
function contextOf(spec: Pick<RequestSpec<unknown>, 'endpoint' | 'executionId'>): { readonly endpoint: Endpoint; readonly executionId?: string } {
  return spec.executionId === undefined ? { endpoint: spec.endpoint } : { endpoint: spec.endpoint, executionId: spec.executionId };
}

// --- reading an answer -------------------------------------------------------------------------------

/** A count is a plain decimal integer; `0x0`, `0.5`, `12abc`, `-1` or `1e3` say nothing we can trust. */
const COUNT = /^\d{1,15}$/u;
/** Delta-seconds (RFC 9110 §10.2.3), also in the decimal or exponent forms some servers write. */
const SECONDS = /^\d+(?:\.\d+)?(?:[eE]\+?\d+)?$/u;
/** IMF-fixdate, the one date form senders must generate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`. */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/u;

/** The four counters of service.md §2.1, by the field each is read into. */
const COUNTERS = [
  ['limitPerMinute', 'x-ratelimit-limit-rpm'],
  ['remainingPerMinute', 'x-ratelimit-remaining-rpm'],
  ['limitPerDay', 'x-ratelimit-limit-daily'],
  ['remainingPerDay', 'x-ratelimit-remaining-daily'],
] as const;

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
  const info: Record<string, number> = {};
  for (const [field, name] of COUNTERS) {
    const raw = headers.get(name)?.trim();
    if (raw !== undefined && COUNT.test(raw)) info[field] = Number(raw);
  }
  const retryAfter = retryAfterMs(headers, now);
  if (retryAfter !== undefined) info['retryAfterMs'] = retryAfter;
  return info;
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
  const context = contextOf(spec);
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

/** Again after our own backoff: exponential with "equal jitter", half the step fixed, half random, capped at `maxDelayMs`. */
function backoff(input: RetryInput, reason: string): RetryDecision {
  const step = Math.min(input.policy.maxDelayMs, input.policy.baseDelayMs * 2 ** (input.attempt - 1));
  return { retry: true, delayMs: Math.round(step / 2 + (input.random * step) / 2), reason };
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
    if (asked !== undefined && asked > input.policy.maxWaitMs) return waitFor(asked, input, 'rate limited');
    const window = input.gated === true ? 0 : (asked ?? input.policy.rateLimitWaitMs);
    // Behind a gate the budget spaces identical starts itself (`startReadyAt` in budget/account-rules.ts).
    const delayMs = endpoint === 'run' && input.gated !== true ? Math.max(window, DUPLICATE_WINDOW_MS) : window;
    return waitFor(delayMs, input, 'rate limited');
  }
  // 3. Anything else may have reached the server: only repeatable requests go again (service.md §2.2),
  //    and a start whose connection was never made (refused, no such host), which reached nothing.
  if (!isRepeatable(endpoint) && !neverConnected(error)) return { retry: false, reason: `${endpoint} is not repeatable` };
  // 4. No answer: the connection failed or timed out.
  if (isNetworkError(error)) return backoff(input, 'network');
  if (isTimeoutError(error)) return backoff(input, 'timeout');
  // 5. The server failed (5xx, E0000); honour its Retry-After when it sent one.
  if (isServerError(error)) {
    return error.retryAfterMs === undefined ? backoff(input, 'server error') : waitFor(error.retryAfterMs, input, 'server error');
  }
  // 6. A body that is not JSON at all is a broken transfer, not a schema change: worth one more look.
  if (isResponseValidationError(error) && error.reason === 'not-json') return backoff(input, 'unreadable body');
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

/*
 * The request path is a chain of small stages, each a function of the Observable below it: a request
 * goes down validate → telemetry → retry → unwrap → budget → deadline → fetch, and its answer comes
 * back up through them. A call is one subscription through the chain, and unsubscribing is the one way
 * to stop it, wherever it is: it withdraws a wait in the budget, clears a pause between attempts or a
 * deadline, and aborts an exchange on its way.
 *
 * Every run's next read waits in the budget, thousands at once, so a waiting request must cost little:
 * each stage's state for one subscription is one object (a {@link Stage}), which is both the
 * subscriber of the stage below and the teardown the stage above holds, and the stages below the
 * budget are only made once it grants.
 */

/** One HTTP exchange: the answer, its body read within `maxResponseBytes`; `headers` are the telemetry's. */
type Exchange = (spec: RequestSpec<unknown>, signal: AbortSignal, headers: Readonly<Record<string, string>> | undefined) => Promise<Answer>;

/** What every request of one transport shares: the client's options, and how a request is sent and its answer cleaned. */
interface RequestPath extends ResolvedOptions {
  readonly exchange: Exchange;
  readonly redact: Redactor;
}

/** What a stage holds of the stage below once done with it. */
const LEFT: Unsubscribable = { unsubscribe: () => undefined };

/** Runs a teardown as rxjs does: a function is called, a subscription unsubscribed. */
function runTeardown(teardown: TeardownLogic): void {
  if (typeof teardown === 'function') teardown();
  else teardown?.unsubscribe();
}

/**
 * One stage's state for one subscription, in one object: the subscriber of the stage below, and the
 * teardown the stage above holds. rxjs takes an object with `closed`, `add`, `remove` and
 * `unsubscribe` as a subscriber as it is, without a SafeSubscriber around it, so a stage costs this
 * object alone: no observer literal or closure per stage, the stage below's teardown in a field.
 */
abstract class Stage<In, Out = In> implements Observer<In>, SubscriptionLike {
  /** The stage below's teardown, or {@link LEFT} (one field for both: thousands of stages wait at once). */
  #below: TeardownLogic = undefined;

  constructor(protected readonly destination: Observer<Out>) {}

  /** Done with the stage below: it ended, or this stage failed or was left. */
  get closed(): boolean {
    return this.#below === LEFT;
  }

  /** Takes the stage below's teardown as its subscription is made; runs it at once when already done with it. */
  add(teardown: TeardownLogic): void {
    if (this.closed) runTeardown(teardown);
    else if (this.#below === undefined) this.#below = teardown;
    else {
      // An Observable other than a stage (a test's, say) may hand over several.
      const all = new Subscription();
      all.add(this.#below);
      all.add(teardown);
      this.#below = all;
    }
  }

  remove(teardown: TeardownLogic): void {
    if (this.#below === teardown) this.#below = undefined;
  }

  unsubscribe(): void {
    this.leave();
  }

  abstract next(value: In): void;

  error(error: unknown): void {
    if (this.leave()) this.destination.error(error);
  }

  complete(): void {
    if (this.leave()) this.destination.complete();
  }

  /** Done with the stage below: its teardown runs, once. False when it already was. */
  protected leave(): boolean {
    const below = this.#below;
    if (below === LEFT) return false;
    this.#below = LEFT;
    runTeardown(below);
    return true;
  }

  /** Open for a new subscription below, once done with the last (the retry stage's next attempt). */
  protected reopen(): void {
    this.#below = undefined;
  }
}

/**
 * validate, then the chain: the call is described (its arguments checked) on subscription, so a bad
 * argument is the subscriber's error and nothing is sent. The ticket is built whole, not spread: every
 * run's next read holds one while it waits in the budget.
 */
function sendRequest<T>(path: RequestPath, describe: () => RequestSpec<T>, placement: Placement | undefined): Observable<T> {
  return new Observable<T>((subscriber) => {
    const spec = describe();
    const { endpoint, key } = spec;
    const priority = placement?.priority ?? priorityOf(endpoint);
    const ticket: GateTicket = key === undefined ? { endpoint, priority } : { endpoint, priority, key };
    const trace = traced(path, spec, priority, placement, subscriber);
    return retried(new RequestAttempts(path, spec, ticket, trace), endpoint, path, trace).subscribe(trace ?? subscriber);
  });
}

/**
 * One request's attempts, each made afresh: unwrap → budget, and deadline → fetch below the budget
 * only once it grants, so that a waiting request holds none of them. What they are made of is kept
 * here once, for the retry and budget stages to make them from (not a closure each).
 */
class RequestAttempts<T> implements Attempts<T>, Exchanges {
  constructor(
    private readonly path: RequestPath,
    private readonly spec: RequestSpec<T>,
    private readonly ticket: GateTicket,
    private readonly trace: Trace | undefined,
  ) {}

  attempt(): Observable<T> {
    const { path, spec } = this;
    return unwrapped(budgeted(this, path.gate, this.ticket, this.trace), spec, path.redact);
  }

  exchange(): Observable<Answer> {
    const { path, spec } = this;
    return deadline(fetched(path, spec, this.trace), path.scheduler, path.timeouts[spec.endpoint], spec);
  }
}

/**
 * telemetry: the request's trace, made only when the client has a telemetry hook (a client without
 * one counts nothing). The hook hears of the request as it is made, and once as it ends — with data,
 * an error, or left — with what its attempts counted on the way (answers, budget waits, retries),
 * which the stages below tell this one.
 */
function traced<T>(path: RequestPath, spec: RequestSpec<T>, priority: RequestPriority, placement: Placement | undefined, destination: Observer<T>): Traced<T> | undefined {
  const hook = path.telemetry;
  if (hook === undefined) return undefined;
  const { endpoint, executionId } = spec;
  const observer = hook.request({
    endpoint,
    method: ENDPOINTS[endpoint].method === 'get' ? 'GET' : 'POST',
    priority,
    ...present({ executionId, parent: placement?.telemetryParent }),
    at: path.scheduler.now(),
  });
  return new Traced(destination, observer, path.scheduler);
}

/** What the stages below the trace tell it of the request's attempts. */
export interface Trace {
  readonly observer: RequestTelemetry;
  retries: number;
  /** An attempt asks the budget for its turn. */
  waiting(): void;
  /** The budget granted the attempt that asked last. */
  granted(): void;
  answered(status: number): void;
}

/** One request's trace, the stage above its retries (see {@link traced}). */
class Traced<T> extends Stage<T> implements Trace {
  retries = 0;
  budgetWaitMs = 0;
  #rateLimited = 0;
  #status: number | undefined;
  #askedAt = 0;
  #ended = false;

  constructor(
    destination: Observer<T>,
    readonly observer: RequestTelemetry,
    private readonly scheduler: SchedulerLike,
  ) {
    super(destination);
  }

  waiting(): void {
    this.#askedAt = this.scheduler.now();
  }

  granted(): void {
    this.budgetWaitMs += this.scheduler.now() - this.#askedAt;
  }

  answered(status: number): void {
    this.#status = status;
    if (status === 429) this.#rateLimited += 1;
  }

  next(value: T): void {
    if (this.closed) return;
    this.#end('ok');
    this.destination.next(value);
  }

  override error(error: unknown): void {
    if (!this.leave()) return;
    this.#end('error', error);
    this.destination.error(error);
  }

  override unsubscribe(): void {
    if (this.leave()) this.#end('cancelled');
  }

  // Once: the request's value comes before its completion, and its subscriber may leave in between.
  #end(outcome: RequestTelemetryEnd['outcome'], error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    const status = this.#status;
    const { retries, budgetWaitMs } = this;
    this.observer.end({ at: this.scheduler.now(), outcome, retries, budgetWaitMs, rateLimited: this.#rateLimited, ...present({ status }), ...(outcome === 'error' ? { error } : {}) });
  }
}

/** What the retry stage needs of the client's options. */
export type RetryContext = Pick<ResolvedOptions, 'retry' | 'scheduler' | 'logger' | 'gate'>;

/** Where the retry stage makes each attempt: a fresh Observable per call. */
export interface Attempts<T> {
  attempt(): Observable<T>;
}

/**
 * retry: one attempt after another, each a subscription to a fresh `attempts.attempt()`. A failed
 * attempt goes again when {@link decideRetry} says so, after its delay on the client's scheduler;
 * otherwise its error is the request's. Unsubscribing ends the current attempt or clears the pause.
 */
export function retried<T>(attempts: Attempts<T>, endpoint: Endpoint, context: RetryContext, trace?: Trace): Observable<T> {
  return new Observable<T>((subscriber) => new Retry(subscriber, attempts, endpoint, context, trace));
}

class Retry<T> extends Stage<T> {
  /** Attempts that failed so far. */
  #failed = 0;
  #pause: Subscription | undefined;

  constructor(
    destination: Observer<T>,
    private readonly attempts: Attempts<T>,
    private readonly endpoint: Endpoint,
    private readonly context: RetryContext,
    private readonly trace: Trace | undefined,
  ) {
    super(destination);
    attempts.attempt().subscribe(this);
  }

  next(value: T): void {
    if (!this.closed) this.destination.next(value);
  }

  override error(error: unknown): void {
    if (!this.leave()) return;
    this.#failed += 1;
    const { endpoint, context, trace } = this;
    const decision = decideRetry({ endpoint, attempt: this.#failed, error, policy: context.retry, random: Math.random(), gated: context.gate !== undefined });
    if (!decision.retry) {
      this.destination.error(error);
      return;
    }
    if (trace !== undefined) trace.retries += 1;
    context.logger?.debug?.(`flowstream: retrying ${endpoint} in ${decision.delayMs} ms (${decision.reason})`, { endpoint, attempt: this.#failed });
    this.#pause = context.scheduler.schedule(() => {
      this.#pause = undefined;
      // The next attempt is this stage's below, as the first was.
      this.reopen();
      this.attempts.attempt().subscribe(this);
    }, decision.delayMs);
  }

  override unsubscribe(): void {
    this.#pause?.unsubscribe();
    this.#pause = undefined;
    this.leave();
  }
}

/**
 * unwrap: an answer becomes the endpoint's data or the one error that describes it ({@link unwrap}).
 * A start's `onSending` hears `false` when its attempt surely started nothing: the service refused it
 * (a 4xx, or a business error that is not its own failure), or its connection was never made. It hears
 * it here, after the budget heard the attempt's outcome and before the request hears the error; a wait
 * the budget refused was never sent, and a gate's refusal is never a network error.
 */
export function unwrapped<T>(below: Observable<Answer>, spec: Pick<RequestSpec<T>, 'endpoint' | 'executionId' | 'schema' | 'onSending'>, redact: Redactor): Observable<T> {
  return new Observable<T>((subscriber) => below.subscribe(new Unwrap(subscriber, spec, redact)));
}

class Unwrap<T> extends Stage<Answer, T> {
  constructor(
    destination: Observer<T>,
    private readonly spec: Pick<RequestSpec<T>, 'endpoint' | 'executionId' | 'schema' | 'onSending'>,
    private readonly redact: Redactor,
  ) {
    super(destination);
  }

  next(answer: Answer): void {
    if (this.closed) return;
    let value: T;
    try {
      value = unwrap(answer, this.spec, this.redact);
    } catch (error: unknown) {
      this.fail(error, startedNothing(error));
      return;
    }
    this.destination.next(value);
  }

  override error(error: unknown): void {
    this.fail(error, neverConnected(error));
  }

  private fail(error: unknown, startedNothing: boolean): void {
    if (!this.leave()) return;
    if (startedNothing) this.spec.onSending?.(false);
    this.destination.error(error);
  }
}

/** Where the budget stage makes its attempt's exchange, once the gate grants. */
export interface Exchanges {
  exchange(): Observable<Answer>;
}

/**
 * budget: waits for the gate's grant (when the client has one), then subscribes to
 * `below.exchange()`, and tells the gate each attempt's outcome once: the answer's status and rate-limit headers, or no status
 * when no whole answer came (a failure, the deadline, an unsubscription). Leaving while it waits
 * withdraws the request, unsent; a refusal is the attempt's error. Through the gate's `wait`, a waiting
 * request holds this stage's one object and no Promise, AbortController or abort listener; a gate with
 * only `acquire` is waited on through that.
 */
export function budgeted(below: Exchanges, gate: RequestGate | undefined, ticket: GateTicket, trace?: Trace): Observable<Answer> {
  if (gate === undefined) return below.exchange();
  return new Observable<Answer>((subscriber) => new Budget(subscriber, below, gate, ticket, trace));
}

class Budget extends Stage<Answer> implements GateTurn {
  /** Waiting for the gate's grant, then sent (granted), then reported to the gate, once. */
  #state: 'waiting' | 'granted' | 'reported' = 'waiting';
  #withdraw: (() => void) | undefined;

  constructor(
    destination: Observer<Answer>,
    private readonly below: Exchanges,
    private readonly gate: RequestGate,
    private readonly ticket: GateTicket,
    private readonly trace: Trace | undefined,
  ) {
    super(destination);
    trace?.waiting();
    if (gate.wait !== undefined) {
      this.#withdraw = gate.wait(ticket, this);
      return;
    }
    const waiting = new AbortController();
    gate.acquire(ticket, waiting.signal).then(
      () => {
        this.send();
      },
      (error: unknown) => {
        this.error(error);
      },
    );
    this.#withdraw = () => {
      waiting.abort();
    };
  }

  /** The gate's grant: the attempt goes in a microtask, as a Promise's reaction would (the gate may be mid-step). */
  release(): void {
    queueMicrotask(() => {
      this.send();
    });
  }

  refuse(error: Error): void {
    queueMicrotask(() => {
      this.error(error);
    });
  }

  next(answer: Answer): void {
    if (this.closed) return;
    this.report(answer);
    this.destination.next(answer);
  }

  override error(error: unknown): void {
    if (!this.leave()) return;
    this.report();
    this.destination.error(error);
  }

  override unsubscribe(): void {
    if (!this.leave()) return;
    if (this.#state === 'waiting') this.#withdraw?.();
    else this.report();
  }

  private send(): void {
    this.#state = 'granted';
    this.trace?.granted();
    if (this.closed) this.report();
    else this.below.exchange().subscribe(this);
  }

  /** Tells the gate a granted attempt's outcome, once; a refused or withdrawn one was never sent. */
  private report(answer?: Answer): void {
    if (this.#state !== 'granted') return;
    this.#state = 'reported';
    this.gate.report({ ticket: this.ticket, httpStatus: answer?.status, rateLimit: answer?.rateLimit ?? {} });
  }
}

/**
 * deadline: the attempt's timeout covers the answer AND its body (a body that stalls would otherwise
 * hang the call, and a run's polling, for ever). When it passes, the stage below is unsubscribed (the
 * exchange aborted) and the attempt fails with `TimeoutError`. The timer is `scheduler`'s.
 */
export function deadline<A>(below: Observable<A>, scheduler: SchedulerLike, timeoutMs: number, context: Pick<RequestSpec<unknown>, 'endpoint' | 'executionId'>): Observable<A> {
  return new Observable<A>((subscriber) => new Deadline(subscriber, below, scheduler, timeoutMs, context));
}

class Deadline<A> extends Stage<A> {
  readonly #timer: Subscription;

  constructor(destination: Observer<A>, below: Observable<A>, scheduler: SchedulerLike, timeoutMs: number, context: Pick<RequestSpec<unknown>, 'endpoint' | 'executionId'>) {
    super(destination);
    // Set first: the stage below may answer at once.
    this.#timer = scheduler.schedule(() => {
      this.error(new TimeoutError({ ...contextOf(context), timeoutMs }));
    }, timeoutMs);
    below.subscribe(this);
  }

  next(value: A): void {
    if (!this.closed) this.destination.next(value);
  }

  protected override leave(): boolean {
    if (!super.leave()) return false;
    this.#timer.unsubscribe();
    return true;
  }
}

/**
 * fetch: one exchange per subscription, aborted when unsubscribed before it settles. A start's
 * `onSending` hears `true` as the exchange begins: from then on the execution may exist, even if the
 * attempt fails. fetch's own errors become `NetworkError`, rid of the key: they can quote the server (a
 * malformed answer's bytes ride in a parser error's `data`).
 */
function fetched(path: RequestPath, spec: RequestSpec<unknown>, trace: Trace | undefined): Observable<Answer> {
  return new Observable<Answer>((subscriber) => {
    const sending = new AbortController();
    let settled = false;
    spec.onSending?.(true);
    path.exchange(spec, sending.signal, trace?.observer.headers).then(
      (answer) => {
        settled = true;
        if (subscriber.closed) return;
        trace?.answered(answer.status);
        subscriber.next(answer);
        subscriber.complete();
      },
      (error: unknown) => {
        settled = true;
        if (subscriber.closed) return;
        subscriber.error(isResponseTooLargeError(error) ? error : new NetworkError({ ...contextOf(spec), cause: path.redact.error(error) }));
      },
    );
    return () => {
      if (!settled) sending.abort();
    };
  });
}

/**
 * Creates the client's one ky instance and its request path. The API key lives only in this closure
 * and in the ky instance's headers, never on an object users can inspect.
 *
 * @example
 * ```ts
 * const transport = createTransport(apiKey, normalizeOptions(options));
 * const plan = await transport.call(undefined, () => ({ endpoint: 'detail', path: 'openapi/workflows/c-1', schema: workflowPlanSchema }));
 * ```
 */
export function createTransport(apiKey: string, options: ResolvedOptions): Transport {
  const { scheduler, maxResponseBytes } = options;
  const http: KyInstance = ky.create({
    prefixUrl: `${options.baseUrl}/`,
    // `options.headers` holds no Authorization of its own (`normalizeOptions` drops one): the credentials are ours.
    headers: { ...userAgentHeader(), ...options.headers, authorization: `Bearer ${apiKey}` },
    retry: 0, // retries are the retry stage's
    timeout: false, // the deadline's, which covers the body too
    // A redirected API call is an error, never followed: fetch would carry the custom headers to the
    // other origin, turn a POST start into a GET and take that origin's answer for the start.
    redirect: 'manual',
    throwHttpErrors: false, // every answer goes through the one error factory
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  const exchange: Exchange = async (spec, signal, headers) => {
    const { body } = spec;
    const response = await http(spec.path, {
      method: ENDPOINTS[spec.endpoint].method,
      signal,
      searchParams: spec.searchParams,
      headers: typeof body === 'string' ? { ...headers, 'content-type': 'application/json' } : (headers ?? {}),
      body: body ?? null,
    });
    const rateLimit = readRateLimit(response.headers, scheduler.now());
    if (isRedirect(response)) {
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, rateLimit, text: '', location: response.headers.get('location') ?? '' };
    }
    const tooLarge = (): Error => new ResponseTooLargeError({ ...contextOf(spec), maxBytes: maxResponseBytes });
    return { status: response.status, rateLimit, text: await readBodyText(response, maxResponseBytes, tooLarge) };
  };

  // The key must never appear in errors or logs: whatever the server sends is rid of it (`redact`) before anything reads it.
  const path: RequestPath = { ...options, exchange, redact: createRedactor(apiKey) };

  const request = <T>(describe: () => RequestSpec<T>, placement?: Placement): Observable<T> => sendRequest(path, describe, placement);

  /** A call as a Promise: the first value of its request, the call's signal unsubscribing it. */
  const call = <T>(given: CallOptions | undefined, describe: () => RequestSpec<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const placement = callOptions(given);
      const { signal } = placement;
      // An abort rejects with the caller's reason, whatever it is (not always an Error).
      if (signal?.aborted === true) {
        reject(signal.reason as Error);
        return;
      }
      const pending = new PendingCall<T>(signal, resolve, reject);
      pending.subscription = request(describe, placement).subscribe(pending);
      if (!pending.subscription.closed) signal?.addEventListener('abort', pending, ONCE);
    });

  return { request, call };
}

const ONCE: AddEventListenerOptions = { once: true };

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
