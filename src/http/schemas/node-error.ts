import type { NodeError } from '../../domain/model.js';

/**
 * Cleans a node's `errorMessage` (service.md §4.3): `"[]"` on success → no error; a JSON-encoded array
 * of strings → its entries joined; plain text (abort, timeout, credits) → kept as is. `raw` always
 * holds what the service sent.
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
  // service.md §4.3 promises strings. Anything else is shown as JSON, when it can be: an entry nested
  // thousands deep would overflow JSON.stringify's stack, and is then not a message but the raw text.
  const messages: string[] = [];
  for (const entry of parsed as unknown[]) {
    const text = typeof entry === 'string' ? entry : shallowJson(entry);
    if (text === undefined) return undefined;
    if (text.trim() !== '') messages.push(text.trim());
  }
  return messages;
}

const MAX_ENTRY_DEPTH = 32;

/** `JSON.stringify(value)` when `value` nests no deeper than `MAX_ENTRY_DEPTH`, else `undefined`. */
function shallowJson(value: unknown): string | undefined {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth += 1) {
    if (depth > MAX_ENTRY_DEPTH) return undefined;
    level = level.flatMap((item) => (typeof item === 'object' && item !== null ? Object.values(item as Readonly<Record<string, unknown>>) : []));
  }
  return JSON.stringify(value);
}
