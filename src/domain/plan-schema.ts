import * as z from 'zod/mini';
import type { PlanVariable } from './model.js';
import { nearestName } from './nearest-name.js';

/** The schema of one variable's value (any value for a variable of a kind this version does not know). */
export type VariableSchema = z.ZodMiniType;

/**
 * A zod/mini object schema of a workflow's variables (see {@link planSchema}): strict — a name the plan
 * does not have is refused — and a Standard Schema (`schema['~standard']`).
 */
export type PlanSchema = z.ZodMiniObject<Readonly<Record<string, VariableSchema>>, z.core.$strict>;

/** A value the service would take as "not given": absent, `null`, blank text, an empty list. */
function isMissing(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
}

/** A value as an error message shows it: its JSON, or its type when it has none (or a cycle). */
function shown(value: unknown): string {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return typeof value;
  try {
    return JSON.stringify(value);
  } catch {
    return typeof value;
  }
}

const REQUIRED = 'is required by the workflow and was not given';

/** The one variable name a zod object cannot hold: JavaScript's own `__proto__`. */
const UNCHECKABLE_NAME = '__proto__';
const UNCHECKABLE = 'is a variable name that cannot be checked or sent as a JavaScript object key: rename it in the workflow';

/**
 * Why `name` is not a variable of a plan whose variables are `names`, with the nearest one it has
 * ("did you mean `topic`?") or the list of them.
 */
export function unknownVariableProblem(name: string, names: readonly string[]): string {
  const suggestion = nearestName(name, names);
  const hint =
    suggestion !== undefined ? `did you mean \`${suggestion}\`?` : names.length === 0 ? 'the workflow has no variables' : `its variables are ${names.map((known) => `\`${known}\``).join(', ')}`;
  return `is not a variable of this workflow: ${hint}`;
}

/** An uploaded file's key: service.md §5.5 takes any string starting with `of_` for one. */
const FILE_KEY_PREFIX = 'of_';
/** As a pattern, not `z.startsWith`: its JSON Schema carries a `format` no validator knows (`starts_with`). */
const FILE_KEY_PATTERN = /^of_/;

/** The schema of one variable, before `required` makes it optional or not. */
function valueSchema(variable: PlanVariable): VariableSchema {
  const { variableType, required, options } = variable;
  if (variableType === 'resource') {
    const error = (issue: { readonly input?: unknown }): string =>
      required && isMissing(issue.input) ? REQUIRED : `${shown(issue.input)} is not a file key (\`${FILE_KEY_PREFIX}…\`, from files.upload) or a list of them`;
    const fileKey = z.string({ error }).check(z.regex(FILE_KEY_PATTERN, { error }));
    // service.md §5.5: an array is a list of files when every element is a file key.
    const list = required ? z.array(fileKey, { error }).check(z.minLength(1, { error })) : z.array(fileKey, { error });
    return z.union([fileKey, list], { error });
  }
  // service.md §5.2: `options` only when non-empty; they bound the value whatever the kind says.
  if (options !== undefined && options.length > 0) {
    const listed = options.map((option) => JSON.stringify(option)).join(', ');
    return z.enum(options as [string, ...string[]], { error: (issue) => (required && isMissing(issue.input) ? REQUIRED : `${shown(issue.input)} is not one of its options: ${listed}`) });
  }
  if (variableType === 'string' || variableType === 'option') {
    const text = z.string({ error: (issue) => (required && isMissing(issue.input) ? REQUIRED : `must be text, not ${shown(issue.input)}`) });
    return required ? text.check(z.minLength(1, { error: REQUIRED }), z.refine((value) => value.trim() !== '', { error: REQUIRED })) : text;
  }
  // A kind this version does not know (or none): any value, as the service takes it (service.md §5.5).
  return required ? z.unknown().check(z.refine((value) => !isMissing(value), { error: REQUIRED })) : z.unknown();
}

/**
 * A zod/mini schema of a workflow's variables, from its plan (`client.workflows.get`): a text
 * variable takes a string, an option variable one of its options, a file variable an uploaded file's
 * key (`of_…`) or a list of them; a required variable must be given (not blank), the others may be
 * left out; a name the plan does not have is refused, with the nearest one it has. A variable of a
 * kind this version does not know takes any value. A plan with a variable named `__proto__`, which a
 * JavaScript object cannot hold as a key, gives a schema that refuses every value at that name. The
 * schema is a Standard Schema, and
 * `z.toJSONSchema(schema)` of zod gives its JSON Schema (for tools, forms, LLMs).
 *
 * @example
 * ```ts
 * import * as z from 'zod/mini';
 * const schema = planSchema(await client.workflows.get('c-123'));
 * const checked = schema.safeParse({ topic: 'tides', tone: 'casual' });
 * const jsonSchema = z.toJSONSchema(schema);
 * ```
 */
export function planSchema(plan: { readonly variables: readonly PlanVariable[] }): PlanSchema {
  const names = plan.variables.map((variable) => variable.name);
  // Entries, not `shape[name] = …`: that assignment would set the prototype for `__proto__`, not a variable.
  const shape: Record<string, VariableSchema> = Object.fromEntries(plan.variables.map((variable) => [variable.name, variable.required ? valueSchema(variable) : z.optional(valueSchema(variable))]));
  const schema = z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? issue.keys.map((key) => `\`${key}\` ${unknownVariableProblem(key, names)}`).join('; ') : `must be an object of variables, not ${shown(issue.input)}`,
  });
  // zod reads and writes a `__proto__` key as the prototype: it would neither check nor keep such a
  // variable, so the schema refuses every value rather than let it pass unchecked.
  if (!names.includes(UNCHECKABLE_NAME)) return schema;
  return schema.check(z.refine(() => false, { error: UNCHECKABLE, path: [UNCHECKABLE_NAME], when: () => true }));
}
