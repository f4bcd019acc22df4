/**
 * The root of every error flowstream throws. Each subclass adds its name to a brand stored under a
 * global symbol, so `isX(error)` guards work across realms (iframes, `vm` contexts, duplicated
 * package copies) where `instanceof` does not.
 */
const KINDS = Symbol.for('flowstream.error.kinds');

/**
 * Options every flowstream error accepts.
 *
 * @example
 * ```ts
 * new FlowstreamError('failed', 'SOME_CODE', { executionId: 'we-1', cause: error });
 * ```
 */
export interface FlowstreamErrorOptions {
  readonly cause?: unknown;
  /** The execution the failure belongs to, when one is known: the caller can `watch()` it later. */
  readonly executionId?: string;
}

/**
 * Base class of all flowstream errors.
 *
 * @example
 * ```ts
 * try { await client.workflows.get('c-123'); }
 * catch (error) { if (isFlowstreamError(error)) console.log(error.code); }
 * ```
 */
export class FlowstreamError extends Error {
  /** A stable, machine-readable identifier of the failure kind. */
  readonly code: string;
  readonly executionId?: string;
  declare readonly [KINDS]: readonly string[];

  constructor(message: string, code: string, options: FlowstreamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.executionId !== undefined) this.executionId = options.executionId;
    brand(this, 'FlowstreamError');
  }

  override get name(): string {
    return this[KINDS].at(-1) ?? 'FlowstreamError';
  }
}

/**
 * Records `kind` on the error; each constructor calls it once, after `super`.
 *
 * @example
 * ```ts
 * class MyError extends FlowstreamError { constructor() { super('x', 'MY'); brand(this, 'MyError'); } }
 * ```
 */
export function brand(error: FlowstreamError, kind: string): void {
  const kinds = (error as { [KINDS]?: readonly string[] })[KINDS] ?? [];
  Object.defineProperty(error, KINDS, { value: [...kinds, kind], enumerable: false, configurable: true });
}

/**
 * Builds a cross-realm guard for the error class whose brand is `kind`.
 *
 * @example
 * ```ts
 * export const isMyError = guardFor<MyError>('MyError');
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T is the guarded class, named by the caller
export function guardFor<T extends FlowstreamError>(kind: string): (value: unknown) => value is T {
  return (value: unknown): value is T => {
    if (typeof value !== 'object' || value === null) return false;
    const kinds = (value as { [KINDS]?: unknown })[KINDS];
    return Array.isArray(kinds) && kinds.includes(kind);
  };
}

/**
 * True for any error thrown by flowstream, from any realm.
 *
 * @example
 * ```ts
 * if (isFlowstreamError(error)) console.log(error.code);
 * ```
 */
export const isFlowstreamError = guardFor<FlowstreamError>('FlowstreamError');
