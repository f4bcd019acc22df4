import type { Reply } from './reply.js';
import { frameworkError } from './reply.js';

/** A JSON body as parsed, with its canonical text (what the duplicate-run check compares). */
export type JsonBody = { readonly ok: true; readonly value: unknown; readonly text: string } | { readonly ok: false; readonly reply: Reply };

/**
 * Reads a JSON body the way the service's body parser does: an empty body is `{}`; bad JSON is a 400
 * framework error (service.md §1.3).
 */
export async function readJson(request: Request): Promise<JsonBody> {
  const raw = await request.text();
  if (raw.trim() === '') return { ok: true, value: {}, text: '{}' };
  try {
    const value: unknown = JSON.parse(raw);
    return { ok: true, value, text: JSON.stringify(value) };
  } catch (error) {
    return { ok: false, reply: frameworkError(400, error instanceof Error ? error.message : 'Invalid JSON body') };
  }
}

/** A plain JSON object (not an array, not null). */
export const isJsonObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
