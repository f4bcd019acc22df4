import { isFlowstreamError } from '../errors/flowstream-error.js';

/** A relay's error answer: a stable code and a message for people; never a stack or a secret. */
export interface ErrorBody {
  readonly error: string;
  readonly message: string;
}

/**
 * The body for `error`: a flowstream error's own code and message (they never hold the API key);
 * anything else only as an internal failure, since its message could hold anything.
 */
export function errorBody(error: unknown): ErrorBody {
  if (isFlowstreamError(error)) return { error: error.code, message: error.message };
  return { error: 'INTERNAL', message: 'The relay failed' };
}
