/** Service timings, in emulator milliseconds. */

/** service.md §3.3: the execution status is derived on a ~1.5 s server tick. */
export const STATUS_TICK_MS = 1_500;

/** service.md §4.4: finished messages are persisted in batches about every 3 s. */
export const MESSAGE_BATCH_MS = 3_000;

/** service.md §3.6: the whole execution times out after 30 minutes (the emulator also times a node out at that age). */
export const EXECUTION_TIMEOUT_MS = 30 * 60 * 1_000;
