import { applyFaults } from './apply-faults.js';
import { answer } from './answer.js';
import { ConnectionDropped } from './connection-dropped.js';
import { corsHeaders } from './cors.js';
import type { AppContext } from './context.js';
import type { Reply } from './reply.js';
import { matchRoute } from './route.js';
import { errCodeOf, toResponse } from './serialize.js';

/** The emulator as a Fetch-style handler: shared by the HTTP server and the in-process `fetch`. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * Builds the app. It logs every request, applies the faults in place, and answers; a dropped
 * connection is thrown as {@link ConnectionDropped} for the shell to act on.
 */
export function createApp(context: AppContext): FetchHandler {
  return async (request) => {
    const url = new URL(request.url);
    const route = matchRoute(request.method, url.pathname);
    const arrival = { sequence: context.requests.nextSequence(), emulatorTime: context.clock.now(), realTime: Date.now() };
    const faults = context.faults.claim(route.endpoint);
    const log = (status: number, reply: Reply | undefined, subject: Reply['subject']): void => {
      context.requests.add({
        ...arrival,
        method: request.method,
        path: url.pathname,
        query: url.search,
        endpoint: route.endpoint,
        status,
        errCode: reply === undefined ? undefined : errCodeOf(reply),
        executionId: subject.executionId ?? ('executionId' in route ? route.executionId : undefined),
        canvasId: subject.canvasId ?? ('canvasId' in route ? route.canvasId : undefined),
        faults: faults.map((fault) => fault.id),
      });
    };
    try {
      const { reply, malformed } = await applyFaults(faults, context, () => answer(context, request, route));
      log(reply.status, reply, reply.subject);
      return toResponse(reply, malformed, corsHeaders(context.cors, request.headers.get('origin')));
    } catch (error) {
      if (error instanceof ConnectionDropped) log(0, undefined, error.subject);
      throw error;
    }
  };
}
