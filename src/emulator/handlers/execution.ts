import type { AppContext } from '../app/context.js';
import { outputPayload } from '../payloads/output-payload.js';
import { statusPayload } from '../payloads/status-payload.js';
import type { Reply } from '../app/reply.js';
import { businessError, success } from '../app/reply.js';

// service.md §1.2: an unknown execution is E1021 (HTTP 200 on the service, 404 in the spec profile).

/** `POST /openapi/workflow/{executionId}/abort` — service.md §3.5. */
export function handleAbort(context: AppContext, executionId: string): Reply {
  const record = context.executions.abort(executionId, context.clock.now());
  if (record === undefined) return businessError(context.profile, 'E1021', { executionId });
  // service.md §1.1, §3.5: `data: null`, also for an execution already finished or failed.
  return success(null, { executionId, canvasId: record.workflow.canvasId });
}

/** `GET /openapi/workflow/{executionId}/status` */
export function handleStatus(context: AppContext, executionId: string): Reply {
  const record = context.executions.get(executionId);
  if (record === undefined) return businessError(context.profile, 'E1021', { executionId });
  return success(statusPayload(record, context.clock.now()), { executionId, canvasId: record.workflow.canvasId });
}

/** `GET /openapi/workflow/{executionId}/output` */
export function handleOutput(context: AppContext, executionId: string): Reply {
  const record = context.executions.get(executionId);
  if (record === undefined) return businessError(context.profile, 'E1021', { executionId });
  // service.md §4.4: whole messages in batches on the service; growing content as the spec allows.
  const mode = context.profile === 'service' ? 'batches' : 'growing';
  return success(outputPayload(record, context.clock.now(), mode, context.baseUrl), { executionId, canvasId: record.workflow.canvasId });
}
