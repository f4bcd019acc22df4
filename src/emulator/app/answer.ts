import { authenticate } from './auth.js';
import type { AppContext } from './context.js';
import { allowsOrigin, preflightReply } from './cors.js';
import { handleCopilot } from '../handlers/copilot.js';
import { handleAbort, handleOutput, handleStatus } from '../handlers/execution.js';
import { handlePublicFile } from '../handlers/public-file.js';
import { handleRun } from '../handlers/run.js';
import { handleUpload } from '../handlers/upload.js';
import { handleDetail, handleSearch } from '../handlers/workflows.js';
import { accountLimitReply } from './rate-limit-reply.js';
import type { Reply } from './reply.js';
import { businessError, frameworkError, withHeaders } from './reply.js';
import type { Route } from './route.js';

/** Answers one request as the service would, faults aside. */
export async function answer(context: AppContext, request: Request, route: Route): Promise<Reply> {
  switch (route.endpoint) {
    case 'preflight':
      return preflightReply(allowsOrigin(context.cors, request.headers.get('origin')));
    case 'unknown':
      // The framework's answer to a route it does not have, before any guard runs.
      return frameworkError(404, `Cannot ${request.method} ${new URL(request.url).pathname}`);
    case 'file':
    case 'run':
    case 'detail':
    case 'abort':
    case 'status':
    case 'output':
    case 'search':
    case 'upload':
    case 'copilot': {
      // service.md §2.1: the per-IP throttler counts every routed request, before auth, and marks its answer.
      const throttled = context.throttler?.take(route.endpoint, context.clock.now()) ?? {};
      return withHeaders(await answerRoute(context, request, route), throttled);
    }
  }
}

async function answerRoute(context: AppContext, request: Request, route: Exclude<Route, { readonly endpoint: 'preflight' | 'unknown' }>): Promise<Reply> {
  switch (route.endpoint) {
    case 'file':
      return handlePublicFile(context, route.fileId, route.name);
    case 'run':
    case 'detail':
    case 'abort':
    case 'status':
    case 'output':
    case 'search':
    case 'upload':
    case 'copilot':
      return answerApi(context, request, route);
  }
}

type ApiRoute = Exclude<Route, { readonly endpoint: 'preflight' | 'unknown' } | { readonly endpoint: 'file' }>;

/** The eight API endpoints: auth, then the account budget, then the handler. */
async function answerApi(context: AppContext, request: Request, route: ApiRoute): Promise<Reply> {
  const denied = authenticate(request, context.apiKey);
  if (denied !== undefined) return denied;
  // service.md §2.1: counted past auth, rejected requests included; every answer carries the headers.
  const decision = context.rateLimiter?.take(context.clock.now());
  if (decision === undefined) return dispatchSafely(context, request, route);
  if (decision.exceeded !== undefined && context.rateLimiter !== undefined) {
    return withHeaders(accountLimitReply(decision.exceeded, context.rateLimiter.limits), decision.headers);
  }
  return withHeaders(await dispatchSafely(context, request, route), decision.headers);
}

async function dispatchSafely(context: AppContext, request: Request, route: ApiRoute): Promise<Reply> {
  try {
    return await dispatch(context, request, route);
  } catch {
    // service.md §1.2: any unexpected server fault is E0000.
    return businessError(context.profile, 'E0000');
  }
}

async function dispatch(context: AppContext, request: Request, route: ApiRoute): Promise<Reply> {
  switch (route.endpoint) {
    case 'run':
      return handleRun(context, request, route.canvasId);
    case 'detail':
      return handleDetail(context, route.canvasId);
    case 'abort':
      return handleAbort(context, route.executionId);
    case 'status':
      return handleStatus(context, route.executionId);
    case 'output':
      return handleOutput(context, route.executionId);
    case 'search':
      return handleSearch(context, request);
    case 'upload':
      return handleUpload(context, request);
    case 'copilot':
      return handleCopilot(context, request);
  }
}
