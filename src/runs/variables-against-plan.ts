import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { PlanVariable, Variables } from '../domain/model.js';
import { planSchema, unknownVariableProblem } from '../domain/plan-schema.js';

/**
 * Checks a run's variables against the workflow's plan (service.md §5.2) before anything is sent, since
 * the service checks none of it (§5.4) and a wrong run still costs credits. The rule is the plan's
 * schema (`planSchema`): a name the plan does not have (with the nearest one it does, "did you mean"),
 * a required variable left out or blank, a value outside a variable's `options`, text that is not a
 * string, a file that is not a file key. Throws `InvalidArgumentError` naming the variable — an unknown
 * name first, then the plan's variables in order.
 *
 * @example
 * ```ts
 * checkVariablesAgainstPlan(await client.workflows.get('c-1'), { topik: 'tides' });
 * // InvalidArgumentError: variables.topik: is not a variable of this workflow: did you mean `topic`?
 * ```
 */
export function checkVariablesAgainstPlan(plan: { readonly variables: readonly PlanVariable[] }, variables: Variables): void {
  const checked = planSchema(plan).safeParse(variables);
  if (checked.success) return;
  const { issues } = checked.error;
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  const [name] = unknown?.keys ?? [];
  if (name !== undefined) {
    throw new InvalidArgumentError(`variables.${name}`, unknownVariableProblem(name, plan.variables.map((variable) => variable.name)));
  }
  const [first] = issues;
  const variable = first?.path[0];
  throw new InvalidArgumentError(variable === undefined ? 'variables' : `variables.${String(variable)}`, first?.message ?? 'do not fit the workflow\'s plan');
}
