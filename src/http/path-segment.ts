import { InvalidArgumentError } from '../errors/validation-errors.js';

/** Ids are short opaque tokens (service.md §1.5); a very long one is a mistake, not an id. */
const MAX_ID_LENGTH = 256;

/**
 * Checks an id and encodes it as one URL path segment. Empty, whitespace-only, over-long and
 * control-character ids are refused before anything is sent; `.` and `..` are refused because URL
 * resolution would turn them into a different path, and `/` is percent-encoded so an id never
 * escapes its segment.
 */
export function pathSegment(argument: string, id: unknown): string {
  if (typeof id !== 'string') throw new InvalidArgumentError(argument, `must be a string (got ${typeof id})`);
  if (id.trim() === '') throw new InvalidArgumentError(argument, 'must not be empty');
  if (id !== id.trim()) throw new InvalidArgumentError(argument, 'must not start or end with whitespace');
  if (id.length > MAX_ID_LENGTH) throw new InvalidArgumentError(argument, `is longer than ${MAX_ID_LENGTH} characters`);
  if (id === '.' || id === '..') throw new InvalidArgumentError(argument, `"${id}" is not an id`);
  for (let index = 0; index < id.length; index += 1) {
    const code = id.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) throw new InvalidArgumentError(argument, 'contains control characters');
  }
  // encodeURIComponent throws a bare URIError on a lone UTF-16 surrogate.
  if (/\p{Cs}/u.test(id)) throw new InvalidArgumentError(argument, 'contains a lone UTF-16 surrogate, which is not text');
  return encodeURIComponent(id);
}
