import { map, type Observable, switchMap } from 'rxjs';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { StartedExecution, Variables } from '../domain/model.js';
import type { ExecutionSource } from './execution-source.js';
import { checkVariablesAgainstPlan } from './variables-against-plan.js';

/**
 * A run's start, for `RunTarget.start`: with `checkVariables`, the workflow's plan is read first and
 * the variables checked against it (`checkVariablesAgainstPlan`), so a run that would be wrong errors
 * with `InvalidArgumentError` and is never started. Leaving while the plan is read sends no start.
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
): (withdraw: AbortSignal) => Observable<StartedExecution> {
  if (!checkVariables) return (withdraw) => source.start(canvasId, input, withdraw);
  const { plan } = source;
  if (plan === undefined) throw new InvalidArgumentError('checkVariables', 'needs a client that can read plans');
  return (withdraw) =>
    plan(canvasId).pipe(
      map((found) => {
        checkVariablesAgainstPlan(found, input.variables ?? {});
      }),
      switchMap(() => source.start(canvasId, input, withdraw)),
    );
}
