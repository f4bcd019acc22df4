import type { AppContext } from '../app/context.js';
import { runPayload } from '../payloads/status-payload.js';
import { resolveVariables } from '../state/variables.js';
import { isJsonObject, readJson } from '../app/read-json.js';
import type { Reply } from '../app/reply.js';
import { businessError, frameworkError, success } from '../app/reply.js';

/** `POST /openapi/workflow/{canvasId}/run` */
export async function handleRun(context: AppContext, request: Request, canvasId: string): Promise<Reply> {
  const subject = { canvasId };
  const body = await readJson(request);
  if (!body.ok) return body.reply;
  const now = context.clock.now();
  // service.md §2.2: the duplicate mark is set before the body is validated or the canvas looked up.
  if (context.debounce.isDuplicate(canvasId, body.text, now)) {
    return frameworkError(409, 'Duplicate request detected. Please wait before retrying.', {}, subject);
  }
  const variables = variablesOf(body.value, context);
  if (!variables.ok) return frameworkError(400, variables.message, {}, subject);
  const stored = context.workflows.get(canvasId);
  if (stored === undefined) return businessError(context.profile, 'E1000', subject);
  const record = context.executions.start(stored.workflow, resolveVariables(variables.values, context.uploads, now), now);
  return success(runPayload(record, now, context.profile), { canvasId, executionId: record.executionId });
}

type Variables = { readonly ok: true; readonly values: Readonly<Record<string, unknown>> } | { readonly ok: false; readonly message: string };

/**
 * service.md §5.4: `{}`, no body, or `{"variables": {…}}`; keys next to `variables` are ignored.
 * Top-level variables (the spec's backward-compatible form) are refused by the service and
 * accepted by the `spec` profile.
 */
function variablesOf(body: unknown, context: AppContext): Variables {
  if (!isJsonObject(body)) return { ok: false, message: 'Request body must be a JSON object' };
  if ('variables' in body) {
    const variables = body['variables'];
    return isJsonObject(variables) ? { ok: true, values: variables } : { ok: false, message: 'variables must be an object' };
  }
  if (Object.keys(body).length === 0 || context.profile === 'spec') return { ok: true, values: body };
  return { ok: false, message: 'Variables must be wrapped in a "variables" object' };
}
