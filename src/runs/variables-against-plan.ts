import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { PlanVariable, VariableValue, Variables } from '../domain/model.js';

/**
 * The optimal string alignment distance (Levenshtein with adjacent transpositions): how many single
 * edits turn `a` into `b`. For names of a few dozen characters at most.
 */
function editDistance(a: string, b: string): number {
  const width = b.length + 1;
  const cells = new Uint32Array((a.length + 1) * width);
  const at = (i: number, j: number): number => cells[i * width + j] ?? 0;
  for (let i = 0; i <= a.length; i += 1) cells[i * width] = i;
  for (let j = 0; j <= b.length; j += 1) cells[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      cells[i * width + j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The plan's name closest to `name` within two edits (case aside), if one is. */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of names) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

function isMissing(value: VariableValue | undefined): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/**
 * Checks a run's variables against the workflow's plan (service.md §5.2) before anything is sent, since
 * the service checks none of it (§5.4) and a wrong run still costs credits: a name the plan does not
 * have (with the nearest one it does, "did you mean"), a required variable left out, a value outside a
 * variable's `options`. Throws `InvalidArgumentError` naming the variable.
 *
 * @example
 * ```ts
 * checkVariablesAgainstPlan(await client.workflows.get('c-1'), { topik: 'tides' });
 * // InvalidArgumentError: variables.topik: is not a variable of this workflow: did you mean `topic`?
 * ```
 */
export function checkVariablesAgainstPlan(plan: { readonly variables: readonly PlanVariable[] }, variables: Variables): void {
  const names = plan.variables.map((variable) => variable.name);
  for (const name of Object.keys(variables)) {
    if (names.includes(name)) continue;
    const suggestion = closest(name, names);
    const hint = suggestion !== undefined ? `did you mean \`${suggestion}\`?` : names.length === 0 ? 'the workflow has no variables' : `its variables are ${names.map((known) => `\`${known}\``).join(', ')}`;
    throw new InvalidArgumentError(`variables.${name}`, `is not a variable of this workflow: ${hint}`);
  }
  for (const variable of plan.variables) {
    const value = variables[variable.name];
    if (variable.required && isMissing(value)) throw new InvalidArgumentError(`variables.${variable.name}`, 'is required by the workflow and was not given');
    const { options } = variable;
    if (options === undefined || isMissing(value)) continue;
    const values: readonly VariableValue[] = Array.isArray(value) ? (value as readonly VariableValue[]) : [value as VariableValue];
    const outside = values.find((entry) => typeof entry !== 'string' || !options.includes(entry));
    if (outside !== undefined) {
      throw new InvalidArgumentError(`variables.${variable.name}`, `${JSON.stringify(outside)} is not one of its options: ${options.map((option) => JSON.stringify(option)).join(', ')}`);
    }
  }
}
