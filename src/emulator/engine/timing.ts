/** Service timings, in emulator milliseconds. */

/**
 * service.md §3.2, §3.3: the service's ~1.5 s poll tick, at every 1.5 s from an execution's creation.
 * On it the execution status is derived and, on the service, waiting nodes start.
 */
export const POLL_TICK_MS = 1_500;

/** service.md §4.4: finished messages are persisted in batches about every 3 s. */
export const MESSAGE_BATCH_MS = 3_000;

/** service.md §3.6: the whole execution times out after 30 minutes (each node too, as the spec profile plays it). */
export const EXECUTION_TIMEOUT_MS = 30 * 60 * 1_000;
