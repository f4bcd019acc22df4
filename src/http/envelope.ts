import type * as z from 'zod/mini';
import { errorFromAnswer, type FailureBody } from '../errors/error-factory.js';
import { ResponseValidationError } from '../errors/validation-errors.js';
import type { Endpoint } from '../domain/endpoints.js';
import type { RateLimitInfo } from '../domain/requests.js';
import type { Redactor } from './key-redaction.js';
import { parseContext } from './schemas/parse-context.js';

/** One answer as the transport read it. */
export interface Answer {
  readonly endpoint: Endpoint;
  readonly status: number;
  /** The body exactly as the server sent it (decoded to text), the key not yet removed. */
  readonly text: string;
  readonly rateLimit: RateLimitInfo;
  readonly executionId?: string | undefined;
}

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
 * removed from all of it by `redact`. The envelope's
 * `success` decides, not only the HTTP status: business errors come as HTTP 200 (service.md §1.2).
 */
export function unwrap<T>(answer: Answer, schema: z.ZodMiniType<T>, redact: Redactor): T {
  const body = parseBody(answer.text, redact);
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
  const parsed = schema.safeParse(envelope['data'], parseContext);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: ['data', ...issue.path], message: issue.message, code: issue.code }));
    return fail(new ResponseValidationError({ ...context, reason: 'schema', issues }));
  }
  return parsed.data;
}

function fail(error: Error): never {
  throw error;
}
