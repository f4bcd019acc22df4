import type { UploadStore } from './upload-store.js';

/** A run variable as the service reads it (service.md §5.5). */
export type ResolvedVariable =
  | { readonly name: string; readonly kind: 'text'; readonly value: string }
  | { readonly name: string; readonly kind: 'files'; readonly files: readonly ResolvedFile[] };

/** A fileKey given as a value; `fileName` is absent when the key is unknown or expired. */
export interface ResolvedFile {
  readonly fileKey: string;
  readonly fileName: string | undefined;
}

/** service.md §5.5: any string starting with `of_` is taken as an uploaded fileKey. */
const isFileKey = (value: unknown): value is string => typeof value === 'string' && value.startsWith('of_');

/** Reads run variables the way the service does; unknown fileKeys do not fail the run (service.md §5.5). */
export function resolveVariables(values: Readonly<Record<string, unknown>>, uploads: UploadStore, now: number): ResolvedVariable[] {
  return Object.entries(values).map(([name, value]): ResolvedVariable => {
    const resolveFile = (fileKey: string): ResolvedFile => ({ fileKey, fileName: uploads.find(fileKey, now)?.fileName });
    if (isFileKey(value)) return { name, kind: 'files', files: [resolveFile(value)] };
    // An array is a list of files only if every element is a fileKey.
    if (Array.isArray(value) && value.length > 0 && value.every(isFileKey)) return { name, kind: 'files', files: value.map(resolveFile) };
    return { name, kind: 'text', value: asText(value) };
  });
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
