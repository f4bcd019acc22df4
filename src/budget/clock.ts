/**
 * The budget's only contact with time. Injected so the scheduler runs in virtual time under test, and
 * so a host can supply its own timers. `now` must be monotonic: a wall clock that jumps back (NTP, a
 * user changing the date) would let the pacing send early.
 *
 * @example
 * ```ts
 * const clock: BudgetClock = {
 *   now: () => performance.now(),
 *   setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
 *   clearTimeout: (handle) => { globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>); },
 * };
 * createRequestBudget({ clock });
 * ```
 */
export interface BudgetClock {
  /** Milliseconds on a monotonic scale; only differences matter. */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The default clock: `performance.now()` (monotonic, in browsers and Node alike) and the global timers.
 * Looked up at each call, so fake timers installed after the budget was created still apply.
 *
 * @example
 * ```ts
 * const start = systemClock.now();
 * ```
 */
export const systemClock: BudgetClock = {
  now: () => globalThis.performance.now(),
  setTimeout: (callback, delayMs) => globalThis.setTimeout(callback, delayMs),
  clearTimeout: (handle) => {
    globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>);
  },
};
