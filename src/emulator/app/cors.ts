import type { Reply } from './reply.js';

/** On every answer, so that a browser page on any origin can call the emulator and read the limits. */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'X-RateLimit-Limit-RPM, X-RateLimit-Remaining-RPM, X-RateLimit-Limit-Daily, X-RateLimit-Remaining-Daily, Retry-After',
};

/** The answer to a CORS preflight: no auth, no rate limit (the browser sends no key with it). */
export function preflightReply(): Reply {
  return {
    status: 204,
    body: undefined,
    headers: {
      'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type',
      'Access-Control-Max-Age': '600',
    },
    subject: {},
  };
}
