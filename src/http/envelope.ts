import type * as z from 'zod/mini';
import { errorFromAnswer, type FailureBody } from '../errors/error-factory.js';
import { ResponseValidationError } from '../errors/validation-errors.js';
import type { Endpoint, RateLimitInfo } from './gate.js';

/**
 * One answer as the transport read it.
 *
 * @example
 * ```ts
 * unwrap({ endpoint: 'abort', status: 200, text: '{"success":true,"data":null}', rateLimit: {} }, abortSchema);
 * ```
 */
export interface Answer {
  readonly endpoint: Endpoint;
  readonly status: number;
  readonly text: string;
  readonly rateLimit: RateLimitInfo;
  readonly executionId?: string | undefined;
}

function parseBody(text: string): FailureBody {
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'text', text };
  }
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Turns an answer into the endpoint's data or the one error that describes it. The envelope's
 * `success` decides, not only the HTTP status: business errors come as HTTP 200 (PROTOCOL §1.2).
 *
 * @example
 * ```ts
 * const snapshot = unwrap({ endpoint: 'status', status: 200, text, rateLimit: {} }, schema);
 * ```
 */
export function unwrap<T>(answer: Answer, schema: z.ZodMiniType<T>): T {
  const body = parseBody(answer.text);
  const context = { endpoint: answer.endpoint, ...(answer.executionId === undefined ? {} : { executionId: answer.executionId }) };
  const envelope = body.kind === 'json' && isRecord(body.value) ? body.value : undefined;
  const ok = answer.status >= 200 && answer.status < 300;
  if (!ok || envelope?.['success'] === false) {
    return fail(errorFromAnswer({ ...context, status: answer.status, body, rateLimit: answer.rateLimit }));
  }
  if (body.kind === 'text') return fail(new ResponseValidationError({ ...context, reason: 'not-json' }));
  if (envelope?.['success'] !== true) {
    return fail(
      new ResponseValidationError({ ...context, reason: 'schema', issues: [{ path: ['success'], message: 'expected the envelope {"success":true,"data":…}' }] }),
    );
  }
  const parsed = schema.safeParse(envelope['data']);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: ['data', ...issue.path], message: issue.message, code: issue.code }));
    return fail(new ResponseValidationError({ ...context, reason: 'schema', issues }));
  }
  return parsed.data;
}

function fail(error: Error): never {
  throw error;
}
