import { InvalidArgumentError } from '../errors/validation-errors.js';
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

/**
 * A clock running `speed` times faster than `base`: for a budget in front of an emulator whose clock
 * is accelerated (DESIGN.md, "Emulator"), so that the budget's minute is the emulator's minute.
 *
 * @example
 * ```ts
 * // The emulator runs 60× faster: its minute lasts one real second, and so does the budget's.
 * const budget = createRequestBudget({ clock: scaledClock(60) });
 * ```
 */
export function scaledClock(speed: number, base: BudgetClock = systemClock): BudgetClock {
  if (!(Number.isFinite(speed) && speed > 0)) throw new InvalidArgumentError('speed', `must be a finite number > 0, got ${speed}`);
  return {
    now: () => base.now() * speed,
    // Rounded up: a timer that fired early would only be set again.
    setTimeout: (callback, delayMs) => base.setTimeout(callback, Math.ceil(delayMs / speed)),
    clearTimeout: (handle) => {
      base.clearTimeout(handle);
    },
  };
}
