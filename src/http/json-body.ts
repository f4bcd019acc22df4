import { InvalidArgumentError } from '../errors/validation-errors.js';

/** Spec §8: E2004 above 100k characters of content. */
export const MAX_TEXT_CHARACTERS = 100_000;
/** Spec §8: E2005 above 100 KB of request payload. */
export const MAX_BODY_BYTES = 100 * 1024;

/**
 * How deep a body may nest. Variables are text, numbers, flags and small objects (service.md §5.5);
 * anything deeper is a mistake, and far deeper would overflow the stack of whoever walks it.
 */
export const MAX_JSON_DEPTH = 64;

/** A lone UTF-16 surrogate: not text, and not encodable as UTF-8 (the service would get U+FFFD). */
const LONE_SURROGATE = /\p{Cs}/u;

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function checkText(text: string, path: string, what: string): void {
  if (text.length > MAX_TEXT_CHARACTERS) throw new InvalidArgumentError(path, `is longer than ${MAX_TEXT_CHARACTERS} characters (the service's E2004)`);
  if (LONE_SURROGATE.test(text)) throw new InvalidArgumentError(path, `${what} contains a lone UTF-16 surrogate, which is not text`);
}

/**
 * Refuses what JSON cannot carry faithfully (undefined, functions, symbols, bigints, NaN/Infinity,
 * class instances such as Date or Map, cycles, lone surrogates), nesting deeper than
 * `MAX_JSON_DEPTH`, and strings the service would reject (E2004). Walks with its own stack, so no
 * input can overflow the call stack.
 */
function checkValue(root: unknown, rootPath: string): void {
  type Visit = { readonly value: unknown; readonly path: string; readonly depth: number } | { readonly leave: object };
  const stack: Visit[] = [{ value: root, path: rootPath, depth: 0 }];
  const ancestors = new Set<object>();
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    if ('leave' in visit) {
      ancestors.delete(visit.leave);
      continue;
    }
    const { value, path, depth } = visit;
    switch (typeof value) {
      case 'string':
        checkText(value, path, 'the value');
        continue;
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(value)) throw new InvalidArgumentError(path, `${String(value)} is not representable in JSON`);
        continue;
      case 'undefined':
      case 'function':
      case 'symbol':
      case 'bigint':
        throw new InvalidArgumentError(path, `a ${typeof value} is not JSON-serialisable`);
      case 'object': {
        if (value === null) continue;
        if (ancestors.has(value)) throw new InvalidArgumentError(path, 'contains a cycle');
        if (!Array.isArray(value) && !isPlainObject(value)) throw new InvalidArgumentError(path, 'must be a plain object, array or primitive');
        if (depth >= MAX_JSON_DEPTH) throw new InvalidArgumentError(path, `nests deeper than ${MAX_JSON_DEPTH} levels`);
        ancestors.add(value);
        stack.push({ leave: value });
        // Pushed in reverse, so that the walk (and so the first error) follows the value's own order.
        for (const [key, entry] of Object.entries(value as Record<string, unknown>).reverse()) {
          if (!Array.isArray(value)) checkText(key, `${path}.${key}`, 'the name');
          stack.push({ value: entry, path: Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`, depth: depth + 1 });
        }
        continue;
      }
    }
  }
}

/** `JSON.stringify`, typed as it behaves: `undefined` for a value JSON has no text for. */
const serialise: (value: unknown) => string | undefined = JSON.stringify;

/**
 * Checks that `value` is plain JSON and that its encoding stays under the service's 100 KB body limit
 * (E2005); returns the exact JSON text that will be sent. The value is serialised once, and what is
 * checked is what was serialised (read back), so a getter that answers differently the second time
 * cannot slip past the checks.
 */
export function encodeJsonBody(argument: string, value: unknown): string {
  // First on what was given, for errors that name the culprit (undefined, a Date, a cycle, the depth)…
  checkValue(value, argument);
  let json: string | undefined;
  try {
    json = serialise(value);
  } catch (error) {
    // A getter that now returns a cycle or something far deeper than it did a moment ago.
    throw new InvalidArgumentError(argument, `could not be serialised as JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (json === undefined) throw new InvalidArgumentError(argument, 'is not JSON-serialisable');
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes > MAX_BODY_BYTES) throw new InvalidArgumentError(argument, `encodes to ${bytes} bytes, over the service's 100 KB limit (E2005)`);
  // …then on exactly the text that will be sent.
  checkValue(JSON.parse(json), argument);
  return json;
}
