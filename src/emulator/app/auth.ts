import type { Reply } from './reply.js';
import { frameworkError } from './reply.js';

const BEARER = /^bearer\s+(\S+)\s*$/i;

/** service.md §1.6: the 401 answers; undefined when the request carries the account's key. */
export function authenticate(request: Request, apiKey: string): Reply | undefined {
  const token = BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
  // service.md §1.6: a token that does not start with `rf_` counts as missing.
  if (token?.startsWith('rf_') !== true) return frameworkError(401, 'Missing API key (use Authorization: Bearer <API_KEY>)');
  if (token !== apiKey) return frameworkError(401, 'Invalid API key');
  return undefined;
}
