/**
 * The brand every flowstream error carries: the kinds of its class and of each ancestor, root
 * first, under a global symbol, so `isX(error)` guards work across realms (iframes, `vm` contexts,
 * duplicated package copies) where `instanceof` does not.
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
  readonly executionId?: string | undefined;
}

/**
 * Base class of all flowstream errors. Each subclass declares `static override readonly kind`; the
 * constructor reads it along the class chain to set `name` and the brand, so subclasses do nothing else.
 *
 * @example
 * ```ts
 * try { await client.workflows.get('c-123'); }
 * catch (error) { if (isFlowstreamError(error)) console.log(error.name, error.code); }
 * ```
 */
export class FlowstreamError extends Error {
  /**
   * The class's name, written out because minifiers rename classes: it becomes `name` and the brand
   * the `isX` guards look for. Every subclass declares its own.
   */
  static readonly kind: string = 'FlowstreamError';

  /** A stable, machine-readable identifier of the failure kind. */
  readonly code: string;
  readonly executionId?: string;
  declare readonly [KINDS]: readonly string[];

  constructor(message: string, code: string, options: FlowstreamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const kinds = kindsOf(new.target);
    Object.defineProperty(this, KINDS, { value: kinds, enumerable: false, configurable: true });
    // Own and non-enumerable, like `Error.prototype.name`: set here once for every subclass.
    Object.defineProperty(this, 'name', { value: kinds.at(-1), enumerable: false, writable: true, configurable: true });
    this.code = code;
    if (options.executionId !== undefined) this.executionId = options.executionId;
  }
}

// The brand of `errorClass`: the `kind` each class from FlowstreamError down to it declares itself (one that declares none adds nothing).
function kindsOf(errorClass: typeof FlowstreamError): readonly string[] {
  const kinds: string[] = [];
  for (let current: unknown = errorClass; typeof current === 'function'; current = Object.getPrototypeOf(current)) {
    if (Object.hasOwn(current, 'kind')) kinds.unshift((current as typeof FlowstreamError).kind);
    if (current === FlowstreamError) break;
  }
  return kinds;
}

// One guard per class, looking for the class's `kind` in the brand rather than using `instanceof`, which fails across realms.
// Each is made as `/* @__PURE__ */ guardFor(X)`: making one has no side effect, so a bundler drops those an app never calls.
export function guardFor<T extends FlowstreamError>(errorClass: (abstract new (...args: never[]) => T) & { readonly kind: string }): (value: unknown) => value is T {
  const kind = errorClass.kind;
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
export const isFlowstreamError = /* @__PURE__ */ guardFor(FlowstreamError);
