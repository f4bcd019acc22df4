import type { AppContext } from '../app/context.js';
import { generateWorkflow } from '../copilot/generate-workflow.js';
import { newCanvasId } from '../ids.js';
import { planPayload } from '../payloads/plan-payload.js';
import { isJsonObject, readJson } from '../app/read-json.js';
import type { Reply } from '../app/reply.js';
import { frameworkError, success } from '../app/reply.js';

/**
 * `POST /openapi/copilot/workflow/generate` — service.md §2.4, §5.3. Every failure is a 400
 * `{statusCode, message, error, modelResponse?}`; the `spec` profile answers an unknown canvas with
 * the 404 the spec lists.
 */
export async function handleCopilot(context: AppContext, request: Request): Promise<Reply> {
  const body = await readJson(request);
  if (!body.ok) return body.reply;
  const fields = isJsonObject(body.value) ? body.value : {};
  const query = fields['query'];
  if (typeof query !== 'string' || query.trim() === '') return frameworkError(400, 'Missing query');
  const locale = typeof fields['locale'] === 'string' ? fields['locale'] : undefined;
  const requested = fields['canvasId'];
  if (requested !== undefined && typeof requested !== 'string') return frameworkError(400, 'canvasId must be a string');

  const now = context.clock.now();
  if (requested !== undefined && context.workflows.get(requested) === undefined) {
    return frameworkError(context.profile === 'service' ? 400 : 404, 'Canvas not found', {}, { canvasId: requested });
  }
  const canvasId = requested ?? newCanvasId();
  // service.md §5.3: a new workflow exists even when generation then fails.
  if (requested === undefined) context.workflows.add({ canvasId, title: '', nodes: [], variables: [] }, now);
  const workflow = generateWorkflow(canvasId, query, locale);
  if (workflow === undefined) {
    return frameworkError(400, 'Failed to generate a workflow plan from the query', { modelResponse: '' }, { canvasId });
  }
  // service.md §5.3: with a canvasId, that workflow's tasks and variables are replaced, irreversibly.
  context.workflows.replace(workflow, now);
  return success({ canvasId, workflowPlan: planPayload(workflow) }, { canvasId });
}
