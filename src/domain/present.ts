/**
 * The fields of `fields` that are given: a field whose value is `undefined` is left out, so an
 * optional property is absent rather than present as `undefined` (`exactOptionalPropertyTypes`).
 * `null` and every other value are kept as they are, for whoever checks them.
 *
 * @example
 * ```ts
 * present({ executionId: 'we-1', parent: undefined }); // { executionId: 'we-1' }
 * ```
 */
export function present<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const kept: Partial<Record<keyof T, unknown>> = {};
  for (const name in fields) if (fields[name] !== undefined) kept[name] = fields[name];
  return kept as { [K in keyof T]?: Exclude<T[K], undefined> };
}
