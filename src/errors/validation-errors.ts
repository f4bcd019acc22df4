import type { Endpoint } from '../domain/endpoints.js';
import { FlowstreamError, guardFor } from './flowstream-error.js';

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
export class ResponseValidationError extends FlowstreamError {
  static override readonly kind: string = 'ResponseValidationError';

  readonly endpoint: Endpoint;
  readonly reason: 'not-json' | 'schema';
  readonly issues: readonly ResponseIssue[];
  readonly mayHaveStarted: boolean;

  constructor(details: {
    readonly endpoint: Endpoint;
    readonly reason: 'not-json' | 'schema';
    readonly issues?: readonly ResponseIssue[];
    readonly executionId?: string;
  }) {
    const issues = details.issues ?? [];
    const listed = issues
      .slice(0, 5)
      .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    const what = details.reason === 'not-json' ? 'is not JSON' : `does not match the schema (${listed})`;
    const started = details.endpoint === 'run' ? '; the execution may have started' : '';
    super(`The ${details.endpoint} response ${what}${started}`, 'RESPONSE_VALIDATION', {
      ...(details.executionId === undefined ? {} : { executionId: details.executionId }),
    });
    this.endpoint = details.endpoint;
    this.reason = details.reason;
    this.issues = issues;
    this.mayHaveStarted = details.endpoint === 'run';
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
 * True for a {@link ResponseValidationError} from any realm.
 *
 * @example
 * ```ts
 * if (isResponseValidationError(error)) console.log(error.issues);
 * ```
 */
export const isResponseValidationError = guardFor(ResponseValidationError);

/**
 * True for an {@link InvalidArgumentError} from any realm.
 *
 * @example
 * ```ts
 * if (isInvalidArgumentError(error)) console.log(error.argument);
 * ```
 */
export const isInvalidArgumentError = guardFor(InvalidArgumentError);
