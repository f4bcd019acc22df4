import type { SchedulerLike } from 'rxjs';
import { nearestName } from '../domain/nearest-name.js';
import type { Endpoint } from '../domain/endpoints.js';
import { FlowstreamError, guardFor } from './flowstream-error.js';
import { CallFailure } from './transport-errors.js';

/**
 * One schema problem, as zod reports it (kept structural so errors do not depend on zod's types).
 *
 * @example
 * ```ts
 * const issue: ResponseIssue = { path: ['data', 'executionId'], message: 'expected string' };
 * ```
 */
export interface ResponseIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly code?: string;
}

/**
 * The service answered 200 but the body does not fit what the endpoint must return: not JSON at all
 * (`reason: 'not-json'`) or JSON of the wrong shape (`reason: 'schema'`, with zod's `issues`).
 * Schemas are lenient where the service is loose (service.md §3.1, §4.3), so this means a real mismatch.
 * For a start, `mayHaveStarted` is true: the service accepted it but we could not read the id.
 *
 * @example
 * ```ts
 * if (isResponseValidationError(e)) console.log(e.endpoint, e.issues);
 * ```
 */
export class ResponseValidationError extends CallFailure {
  static override readonly kind: string = 'ResponseValidationError';

  readonly reason: 'not-json' | 'schema';
  readonly issues: readonly ResponseIssue[];

  constructor(details: {
    readonly endpoint: Endpoint;
    readonly reason: 'not-json' | 'schema';
    readonly issues?: readonly ResponseIssue[];
    readonly executionId?: string | undefined;
  }) {
    const issues = details.issues ?? [];
    const listed = issues
      .slice(0, 5)
      .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    const what = details.reason === 'not-json' ? 'is not JSON' : `does not match the schema (${listed})`;
    super(`The ${details.endpoint} response ${what}`, 'RESPONSE_VALIDATION', details);
    this.reason = details.reason;
    this.issues = issues;
  }
}

/**
 * An argument was rejected before anything was sent: an empty id, variables that are not JSON, a
 * body over 100 KB (the service's E2005), text over 100k characters (E2004), an upload over 50 MiB
 * (service.md §2.3), an unknown locale, an empty copilot query. `argument` names the culprit.
 *
 * @example
 * ```ts
 * await client.executions.status('').catch((e) => isInvalidArgumentError(e) && console.log(e.argument));
 * ```
 */
export class InvalidArgumentError extends FlowstreamError {
  static override readonly kind: string = 'InvalidArgumentError';

  readonly argument: string;

  constructor(argument: string, problem: string) {
    super(`Invalid ${argument}: ${problem}`, 'INVALID_ARGUMENT');
    this.argument = argument;
  }
}

/**
 * Whether `value` is an object of named fields: not `null`, not an array.
 *
 * @example
 * ```ts
 * if (!isRecord(options)) throw new InvalidArgumentError('options', 'must be an object');
 * ```
 */
export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What was given, as a message's `(got …)` says it: `null`, `an array`, or its type.
 *
 * @example
 * ```ts
 * throw new InvalidArgumentError('fetch', `must be a function (got ${shownType(fetch)})`);
 * ```
 */
export function shownType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/**
 * An optional object argument (options, a query, a run's input): absent is `{}`; anything but a plain
 * object — `null` above all, which JavaScript's default parameters let through — is an
 * `InvalidArgumentError` naming the argument, not a TypeError from deep inside the call.
 *
 * @example
 * ```ts
 * const { signal } = objectArgument('options', options);
 * ```
 */
export function objectArgument<T extends object>(argument: string, value: T | undefined): T | Partial<T> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new InvalidArgumentError(argument, `must be an object or left out (got ${shownType(value)})`);
  return value;
}

/**
 * A required options object (`createRedisBudget(options)`): anything but a plain object — left out,
 * `null` — is an `InvalidArgumentError` saying what it must hold, not a TypeError on its first field.
 *
 * @example
 * ```ts
 * requiredOptions(options, 'must be an object with redis and account');
 * ```
 */
export function requiredOptions(options: unknown, problem: string): void {
  if (!isRecord(options)) throw new InvalidArgumentError('options', `${problem} (got ${shownType(options)})`);
}

/** Ids are short opaque tokens (service.md §1.5); a very long one is a mistake, not an id. */
const MAX_ID_LENGTH = 256;

/**
 * Checks an id and encodes it as one URL path segment. Empty, whitespace-only, over-long and
 * control-character ids are refused before anything is sent; `.` and `..` are refused because URL
 * resolution would turn them into a different path, and `/` is percent-encoded so an id never
 * escapes its segment.
 *
 * @example
 * ```ts
 * `openapi/workflows/${pathSegment('canvasId', canvasId)}`;
 * ```
 */
export function pathSegment(argument: string, id: unknown): string {
  if (typeof id !== 'string') throw new InvalidArgumentError(argument, `must be a string (got ${typeof id})`);
  if (id.trim() === '') throw new InvalidArgumentError(argument, 'must not be empty');
  if (id !== id.trim()) throw new InvalidArgumentError(argument, 'must not start or end with whitespace');
  if (id.length > MAX_ID_LENGTH) throw new InvalidArgumentError(argument, `is longer than ${MAX_ID_LENGTH} characters`);
  if (id === '.' || id === '..') throw new InvalidArgumentError(argument, `"${id}" is not an id`);
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\0-\x1f\x7f]/u.test(id)) throw new InvalidArgumentError(argument, 'contains control characters');
  // encodeURIComponent throws a bare URIError on a lone UTF-16 surrogate.
  if (/\p{Cs}/u.test(id)) throw new InvalidArgumentError(argument, 'contains a lone UTF-16 surrogate, which is not text');
  return encodeURIComponent(id);
}

/**
 * True for a {@link ResponseValidationError} from any realm.
 *
 * @example
 * ```ts
 * if (isResponseValidationError(error)) console.log(error.issues);
 * ```
 */
export const isResponseValidationError = /* @__PURE__ */ guardFor(ResponseValidationError);

/**
 * True for an {@link InvalidArgumentError} from any realm.
 *
 * @example
 * ```ts
 * if (isInvalidArgumentError(error)) console.log(error.argument);
 * ```
 */
export const isInvalidArgumentError = /* @__PURE__ */ guardFor(InvalidArgumentError);

// --- the checks of options' numbers, each an InvalidArgumentError naming the option ------------------

/** A number ≥ 0 (a count, a share, a delay that may be zero); an `InvalidArgumentError` names the option. */
export function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new InvalidArgumentError(name, `must be a finite number ≥ 0 (got ${String(value)})`);
  return value;
}

/** A number > 0; an `InvalidArgumentError` names the option. */
export function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new InvalidArgumentError(name, `must be a finite number > 0 (got ${String(value)})`);
  return value;
}

/**
 * Timers cannot wait longer than a signed 32-bit number of milliseconds (~24.8 days): setTimeout fires
 * after 1 ms for anything longer, so a longer deadline would expire at once and a longer poll wait
 * would poll in a tight loop.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Checks a delay a timer will wait (a timeout, a poll wait): a finite number of ms > 0 that a timer
 * keeps as given. An `InvalidArgumentError` names the option.
 */
export function timerDelay(name: string, value: unknown): number {
  if (typeof value !== 'number') throw new InvalidArgumentError(name, `must be a number of ms (got ${String(value)})`);
  if (positive(name, value) > MAX_TIMER_MS) throw new InvalidArgumentError(name, `must be at most ${MAX_TIMER_MS} ms (got ${value})`);
  return value;
}

/** A whole number ≥ 1; an `InvalidArgumentError` names the option. */
export function positiveInteger(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(name, `must be a whole number ≥ 1 (got ${String(value)})`);
  return value;
}

// --- the checks of options' other types, for callers from plain JavaScript ---------------------------

/**
 * Whether `value` is an object with a method of each name (duck typing, as for an RxJS scheduler).
 *
 * @example
 * ```ts
 * hasMethods(hook, ['request', 'run']);
 * ```
 */
export function hasMethods(value: unknown, names: readonly string[]): value is object {
  return typeof value === 'object' && value !== null && names.every((name) => typeof Reflect.get(value, name) === 'function');
}

/** What a value that is not the expected kind of object was, `anObject` standing for any object. */
function shownThing(value: unknown, anObject: string): string {
  return value === null ? 'null' : typeof value === 'object' ? anObject : typeof value;
}

/**
 * An optional `AbortSignal` option (`signal`, `detach`): absent is `undefined`; anything else that is
 * not a signal — `{}`, `true`, a controller instead of its signal — is an `InvalidArgumentError`
 * naming the option, not a TypeError from deep inside the call when a listener is added. Checked by
 * shape, so a signal from another realm (an iframe, a polyfill) is taken.
 */
export function abortSignalArgument(name: string, value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError(name, `must be an AbortSignal or left out (got ${shownType(value)})`);
  const signalLike = typeof Reflect.get(value, 'aborted') === 'boolean' && hasMethods(value, ['addEventListener', 'removeEventListener']);
  if (!signalLike) throw new InvalidArgumentError(name, "must be an AbortSignal or left out (got an object without a signal's aborted and addEventListener)");
  return value as AbortSignal;
}

/**
 * An optional RxJS scheduler option (`scheduler`): absent is `undefined`; anything without a
 * scheduler's `now()` and `schedule()` is an `InvalidArgumentError` naming the option, not a TypeError at
 * the first timer or clock reading, long after the call.
 */
export function schedulerArgument(name: string, value: unknown): SchedulerLike | undefined {
  if (value === undefined) return undefined;
  if (!hasMethods(value, ['now', 'schedule'])) throw new InvalidArgumentError(name, `must be an RxJS scheduler (with now and schedule) or left out (got ${shownThing(value, 'an object without now and schedule')})`);
  return value as SchedulerLike;
}

/**
 * A run's events given to a helper (`runResult(run$)`, `runStore(run$)`): anything without an
 * Observable's `pipe` and `subscribe` — `null`, a Promise, a handle instead of its `events` — is an
 * `InvalidArgumentError` naming the argument, not a TypeError from inside.
 */
export function observableArgument(name: string, value: unknown): void {
  if (!hasMethods(value, ['pipe', 'subscribe'])) throw new InvalidArgumentError(name, `must be an Observable of run events (got ${shownThing(value, 'an object that is not an Observable')})`);
}

/**
 * An optional boolean option: absent is `undefined`; a string such as `'false'` — truthy, so it would
 * mean the opposite — is an `InvalidArgumentError` naming the option.
 */
export function booleanArgument(name: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  throw new InvalidArgumentError(name, `must be true, false or left out (got ${typeof value === 'string' ? `'${value}'` : typeof value})`);
}

/** `value` when it is one of `allowed` (typed so, but a JavaScript caller can pass anything); else an `InvalidArgumentError`. */
export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if ((allowed as readonly unknown[]).includes(value)) return value as T;
  const quoted = allowed.map((choice) => `'${choice}'`);
  throw new InvalidArgumentError(name, `must be ${quoted.slice(0, -1).join(', ')} or ${String(quoted.at(-1))} (got ${String(value)})`);
}

/**
 * Refuses a key `allowed` does not have, with the nearest one it has: an options object from
 * JavaScript is not checked by a compiler, and a misspelt key would leave its default in place unsaid.
 */
export function knownKeys(name: string, given: object, allowed: readonly string[]): void {
  for (const key of Object.keys(given)) {
    if (allowed.includes(key)) continue;
    const nearest = nearestName(key, allowed);
    throw new InvalidArgumentError(`${name}.${key}`, `is not an option${nearest === undefined ? ` (${allowed.join(', ')})` : `; did you mean '${nearest}'?`}`);
  }
}
