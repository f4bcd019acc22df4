/**
 * Marks an error that ended a run with the execution it belongs to (so that the caller can
 * `watch()` it later). The error keeps its class, message and stack — a `NetworkError` stays a
 * `NetworkError` — and gains `executionId` (as `FlowstreamError` declares it) when it has none yet.
 * Values that cannot carry a property (primitives, frozen objects) are returned unchanged.
 */
export function withExecutionId(error: unknown, executionId: string): unknown {
  if (typeof error !== 'object' || error === null || !Object.isExtensible(error)) return error;
  if ((error as { executionId?: unknown }).executionId !== undefined) return error;
  Object.defineProperty(error, 'executionId', { value: executionId, enumerable: true, configurable: true, writable: false });
  return error;
}
