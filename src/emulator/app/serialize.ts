import type { Reply } from './reply.js';

/**
 * Turns a reply into a Fetch `Response` with the request's CORS headers; `malformed` cuts a JSON body in
 * half so it no longer parses.
 */
export function toResponse(reply: Reply, malformed: boolean, cors: Readonly<Record<string, string>>): Response {
  const headers = new Headers({ ...cors, ...reply.headers });
  const body = reply.body;
  if (body === undefined) return new Response(null, { status: reply.status, headers });
  if ('bytes' in body) {
    headers.set('Content-Type', body.contentType);
    return new Response(body.bytes, { status: reply.status, headers });
  }
  const text = JSON.stringify(body.json);
  headers.set('Content-Type', 'application/json; charset=utf-8');
  return new Response(malformed ? text.slice(0, Math.ceil(text.length / 2)) : text, { status: reply.status, headers });
}

/** The `errCode` of an envelope with `success: false`, for the request log. */
export function errCodeOf(reply: Reply): string | undefined {
  const body = reply.body;
  if (body === undefined || !('json' in body) || typeof body.json !== 'object' || body.json === null) return undefined;
  const envelope = body.json as { readonly success?: unknown; readonly errCode?: unknown };
  return envelope.success === false && typeof envelope.errCode === 'string' ? envelope.errCode : undefined;
}
