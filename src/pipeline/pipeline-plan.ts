import { InvalidArgumentError } from '../errors/validation-errors.js';

/** A checked pipeline: its steps in an order where every step comes after its dependencies. */
export interface PipelinePlan<Name extends string> {
  readonly order: readonly Name[];
  readonly dependsOn: ReadonlyMap<Name, readonly Name[]>;
}

/**
 * Checks that the steps form a DAG — at least one step, dependencies that exist, no cycle — and
 * orders them (depth-first, declaration order among equals). Throws `InvalidArgumentError` naming the
 * offending step, before anything runs.
 */
export function planPipeline<Name extends string>(steps: Readonly<Record<Name, { readonly dependsOn?: readonly Name[] }>>): PipelinePlan<Name> {
  const names = Object.keys(steps) as Name[];
  if (names.length === 0) throw new InvalidArgumentError('steps', 'a pipeline needs at least one step');
  const dependsOn = new Map<Name, readonly Name[]>();
  for (const name of names) {
    const parents = steps[name].dependsOn ?? [];
    for (const parent of parents) {
      if (!Object.hasOwn(steps, parent)) throw new InvalidArgumentError(`steps.${name}.dependsOn`, `unknown step "${parent}"`);
    }
    dependsOn.set(name, [...new Set(parents)]);
  }
  const order: Name[] = [];
  const state = new Map<Name, 'visiting' | 'done'>();
  const visit = (name: Name, path: readonly Name[]): void => {
    const seen = state.get(name);
    if (seen === 'done') return;
    if (seen === 'visiting') throw new InvalidArgumentError('steps', `cycle ${[...path.slice(path.indexOf(name)), name].join(' → ')}`);
    state.set(name, 'visiting');
    for (const parent of dependsOn.get(name) ?? []) visit(parent, [...path, name]);
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of names) visit(name, []);
  return { order, dependsOn };
}
