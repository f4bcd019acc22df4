import type { NodeError } from '../model.js';

/**
 * Cleans a node's `errorMessage` (PROTOCOL §4.3): `"[]"` on success → no error; a JSON-encoded array
 * of strings → its entries joined; plain text (abort, timeout, credits) → kept as is. `raw` always
 * holds what the service sent.
 *
 * @example
 * ```ts
 * parseNodeError('["Request timeout. Please try again later."]')?.message; // 'Request timeout. Please try again later.'
 * parseNodeError('[]'); // undefined
 * ```
 */
export function parseNodeError(raw: string | null | undefined): NodeError | undefined {
  if (raw === null || raw === undefined || raw.trim() === '') return undefined;
  const messages = jsonMessages(raw) ?? [raw.trim()];
  if (messages.length === 0) return undefined;
  return { message: messages.join('; '), messages, raw };
}

/** The entries of a JSON array, or `undefined` when `raw` is not one. */
function jsonMessages(raw: string): string[] | undefined {
  const text = raw.trim();
  if (!text.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  return parsed
    .map((entry: unknown) => (typeof entry === 'string' ? entry : JSON.stringify(entry)))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
