import { map, type Observable, switchMap } from 'rxjs';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { Variables } from '../domain/model.js';
import type { ExecutionSource, StartProgress } from './execution-source.js';
import { checkVariablesAgainstPlan } from './variables-against-plan.js';

/**
 * A run's start, for `RunTarget.start`: with `checkVariables`, the workflow's plan is read first and
 * the variables checked against it (`checkVariablesAgainstPlan`), so a run that would be wrong errors
 * with `InvalidArgumentError` and is never started. While the plan is read nothing of the start is on
 * its way, so leaving then sends no start.
 *
 * @example
 * ```ts
 * runLifecycle(source, { kind: 'start', canvasId, start: startExecution(source, canvasId, input, true) }, settings);
 * ```
 */
export function startExecution(
  source: ExecutionSource,
  canvasId: string,
  input: { readonly variables?: Variables },
  checkVariables: boolean,
): () => Observable<StartProgress> {
  if (!checkVariables) return () => source.start(canvasId, input);
  const { plan } = source;
  if (plan === undefined) throw new InvalidArgumentError('checkVariables', 'needs a client that can read plans');
  return () =>
    plan(canvasId).pipe(
      map((found) => {
        checkVariablesAgainstPlan(found, input.variables ?? {});
      }),
      switchMap(() => source.start(canvasId, input)),
    );
}
