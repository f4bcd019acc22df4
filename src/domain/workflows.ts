import type { Variables } from './model.js';

/**
 * Your workflows by canvas id, each with the type of its variables. Empty in flowstream: the module
 * that `flowstream types --out src/flowstream-workflows.ts` writes adds your account's workflows to it
 * (module augmentation), and from then on `client.run`, `client.startRun`, `runEach`, `thenRun` and
 * pipeline steps check the variables of those canvas ids at compile time: a misspelt name, a missing
 * required variable, an option outside its list. Other canvas ids take any variables.
 *
 * @example
 * ```ts
 * // written by `flowstream types`:
 * declare module 'flowstream' {
 *   interface Workflows {
 *     'c-123': { readonly topic: string; readonly tone?: 'formal' | 'casual' };
 *   }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by module augmentation
export interface Workflows {}

/**
 * An uploaded file's key, the value of a file variable (service.md §5.5: a string starting with `of_`).
 *
 * @example
 * ```ts
 * const [file] = await client.files.upload([new File([bytes], 'in.pdf')]);
 * const attachment = file!.fileKey as FileKey;
 * ```
 */
export type FileKey = `of_${string}`;

/**
 * A canvas id: one of your typed workflows (offered by the editor), or any other string.
 *
 * @example
 * ```ts
 * const id: CanvasId = 'c-123';
 * ```
 */
// `string & {}` keeps the typed ids offered by editors: a bare `string` would absorb them.
// eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents
export type CanvasId = (keyof Workflows & string) | (string & {});

/**
 * The variables of a workflow: their generated type for a canvas id of `Workflows`, any variables for
 * another.
 *
 * @example
 * ```ts
 * const variables: WorkflowVariables<'c-123'> = { topic: 'tides' };
 * ```
 */
export type WorkflowVariables<Id extends string> = Id extends keyof Workflows ? Workflows[Id] : Variables;

/** Whether every variable may be left out: all optional, or none at all (`Record<string, never>`). */
type OptionalOnly<Variables> = object extends Variables ? true : Variables extends Record<string, never> ? true : false;

/**
 * The input of a run of a workflow: `variables` must be given when the workflow has a required one.
 *
 * @example
 * ```ts
 * const input: WorkflowInput<'c-123'> = { variables: { topic: 'tides' } };
 * ```
 */
export type WorkflowInput<Id extends string> = Id extends keyof Workflows ? TypedInputs[Id] : { readonly variables?: Variables };

// Looked up by canvas id (not a conditional on `Id` itself), so that the compiler sees an input of a
// typed workflow as an input of any workflow: a step of a typed id is a step of a `string` id.
type TypedInputs = {
  readonly [Id in keyof Workflows]: OptionalOnly<Workflows[Id]> extends true ? { readonly variables?: Workflows[Id] } : { readonly variables: Workflows[Id] };
};

/**
 * The arguments after the canvas id of a call that starts a run: the input (required when the
 * workflow has a required variable) and the options.
 *
 * @example
 * ```ts
 * function start<Id extends string>(canvasId: Id, ...rest: WorkflowArguments<Id, RunOptions>) {}
 * ```
 */
export type WorkflowArguments<Id extends string, Options> = Id extends keyof Workflows
  ? OptionalOnly<Workflows[Id]> extends true
    ? [input?: WorkflowInput<Id> | undefined, options?: Options | undefined]
    : [input: WorkflowInput<Id>, options?: Options | undefined]
  : [input?: WorkflowInput<Id> | undefined, options?: Options | undefined];
