import { FlowstreamError, guardFor } from '../errors/flowstream-error.js';

/**
 * Why a run token was refused: not a token at all (`malformed`), not signed with this secret
 * (`signature`), past its expiry (`expired`), made for another execution (`execution`), or not
 * granting what the request does (`scope`, a read-only token used to cancel).
 */
export type RunTokenProblem = 'malformed' | 'signature' | 'expired' | 'execution' | 'scope';

/**
 * A run token was refused by `tokens.verify`. `problem` says why; the message never repeats the token.
 *
 * @example
 * ```ts
 * try { await tokens.verify(token, { executionId, scope: 'cancel' }); }
 * catch (error) { if (isRunTokenError(error) && error.problem === 'expired') askForANewLink(); }
 * ```
 */
export class RunTokenError extends FlowstreamError {
  static override readonly kind: string = 'RunTokenError';

  readonly problem: RunTokenProblem;

  constructor(problem: RunTokenProblem) {
    super(MESSAGES[problem], 'RUN_TOKEN');
    this.problem = problem;
  }
}

const MESSAGES: Readonly<Record<RunTokenProblem, string>> = {
  malformed: 'The run token is malformed',
  signature: 'The run token is not signed by this relay',
  expired: 'The run token has expired',
  execution: 'The run token is for another execution',
  scope: 'The run token does not allow this',
};

/**
 * True for a {@link RunTokenError} from any realm.
 *
 * @example
 * ```ts
 * if (isRunTokenError(error)) console.log(error.problem);
 * ```
 */
export const isRunTokenError = guardFor(RunTokenError);
