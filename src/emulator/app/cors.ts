import type { Reply } from './reply.js';

/** Which web pages may call the emulator from a browser: a list of page origins, or `'*'` for every one. */
export interface CorsPolicy {
  readonly origins: readonly string[] | '*';
}

/** The rate-limit headers a page allowed to call the emulator may read (the dashboard example meters them). */
const EXPOSED = 'X-RateLimit-Limit-RPM, X-RateLimit-Remaining-RPM, X-RateLimit-Limit-Daily, X-RateLimit-Remaining-Daily, Retry-After';

/** Whether a request from `origin` (its `Origin` header; none from a server) gets a CORS answer. */
export function allowsOrigin(policy: CorsPolicy, origin: string | null): boolean {
  return policy.origins === '*' || (origin !== null && policy.origins.includes(origin));
}

/**
 * The CORS headers of every answer to a request from `origin`. service.md §1.7: the service answers CORS
 * only for its own web origins; a page elsewhere gets no `Access-Control-Allow-Origin`, so its browser
 * withholds the answer from it (the request itself was handled, counted and answered).
 */
export function corsHeaders(policy: CorsPolicy, origin: string | null): Readonly<Record<string, string>> {
  if (policy.origins === '*') return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED };
  if (origin === null || !allowsOrigin(policy, origin)) return { Vary: 'Origin' };
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED, Vary: 'Origin' };
}

/**
 * The answer to a CORS preflight: no auth, no rate limit (the browser sends no key with it). For a page
 * the policy refuses it allows nothing, so the browser never sends the request it asked about.
 */
export function preflightReply(allowed: boolean): Reply {
  return {
    status: 204,
    body: undefined,
    headers: allowed
      ? { 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS', 'Access-Control-Allow-Headers': 'Authorization, Content-Type', 'Access-Control-Max-Age': '600' }
      : {},
    subject: {},
  };
}
