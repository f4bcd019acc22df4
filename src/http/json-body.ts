import { InvalidArgumentError } from '../errors/validation-errors.js';

/**
 * Spec §8: E2004 above 100k characters of content.
 *
 * @example
 * ```ts
 * 'x'.repeat(MAX_TEXT_CHARACTERS + 1); // refused before sending
 * ```
 */
export const MAX_TEXT_CHARACTERS = 100_000;
/**
 * Spec §8: E2005 above 100 KB of request payload.
 *
 * @example
 * ```ts
 * new TextEncoder().encode(json).byteLength <= MAX_BODY_BYTES;
 * ```
 */
export const MAX_BODY_BYTES = 100 * 1024;

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Refuses what JSON cannot carry faithfully (undefined, functions, symbols, bigints, NaN/Infinity,
 * class instances such as Date or Map, cycles) and strings the service would reject (E2004).
 */
function checkValue(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case 'string':
      if (value.length > MAX_TEXT_CHARACTERS) throw new InvalidArgumentError(path, `is longer than ${MAX_TEXT_CHARACTERS} characters (the service's E2004)`);
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidArgumentError(path, `${String(value)} is not representable in JSON`);
      return;
    case 'undefined':
    case 'function':
    case 'symbol':
    case 'bigint':
      throw new InvalidArgumentError(path, `a ${typeof value} is not JSON-serialisable`);
    case 'object': {
      if (value === null) return;
      if (seen.has(value)) throw new InvalidArgumentError(path, 'contains a cycle');
      if (!Array.isArray(value) && !isPlainObject(value)) throw new InvalidArgumentError(path, 'must be a plain object, array or primitive');
      seen.add(value);
      for (const [key, entry] of Object.entries(value)) checkValue(entry, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`, seen);
      seen.delete(value);
      return;
    }
  }
}

/**
 * Checks that `value` is plain JSON and that its encoding stays under the service's 100 KB body limit
 * (E2005); returns the exact JSON text that will be sent.
 *
 * @example
 * ```ts
 * encodeJsonBody('variables', { variables: { topic: 'rxjs' } }); // '{"variables":{"topic":"rxjs"}}'
 * ```
 */
export function encodeJsonBody(argument: string, value: unknown): string {
  checkValue(value, argument, new Set());
  const json = JSON.stringify(value);
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes > MAX_BODY_BYTES) throw new InvalidArgumentError(argument, `encodes to ${bytes} bytes, over the service's 100 KB limit (E2005)`);
  return json;
}
