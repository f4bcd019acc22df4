/** The extra field schema drift adds to every object. */
export const DRIFT_FIELD = 'x-emulator-drift';

/**
 * Schema drift, as a newer service version might send: every string `status` replaced by a value
 * the client does not know, and optionally an unknown field in every object.
 */
export function drift(value: unknown, unknownStatus: string, extraFields: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => drift(item, unknownStatus, extraFields));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).map(([key, item]) => [
    key,
    key === 'status' && typeof item === 'string' ? unknownStatus : drift(item, unknownStatus, extraFields),
  ]);
  if (extraFields) entries.push([DRIFT_FIELD, 'unexpected']);
  return Object.fromEntries(entries) as unknown;
}
