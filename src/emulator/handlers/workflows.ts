import type { AppContext } from '../app/context.js';
import { planPayload } from '../payloads/plan-payload.js';
import { searchPayload } from '../payloads/search-payload.js';
import type { Reply } from '../app/reply.js';
import { businessError, success } from '../app/reply.js';

/** `GET /openapi/workflows` — service.md §5.1. */
export function handleSearch(context: AppContext, request: Request): Reply {
  return success(searchPayload(context.workflows.list(), new URL(request.url).searchParams));
}

/** `GET /openapi/workflows/{canvasId}` — service.md §5.2; unknown canvas is E1000 (service.md §1.2). */
export function handleDetail(context: AppContext, canvasId: string): Reply {
  const stored = context.workflows.get(canvasId);
  if (stored === undefined) return businessError(context.profile, 'E1000', { canvasId });
  return success(planPayload(stored.workflow), { canvasId });
}
