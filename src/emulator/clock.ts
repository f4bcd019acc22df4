/**
 * Emulator time. Every service duration (node durations, the status tick, message batches, timeouts,
 * rate-limit windows, the duplicate-run window, fileKey expiry) is measured on one clock, so that
 * accelerating it or driving it by hand changes all of them together.
 */
export interface Clock {
  /** Current emulator time, in milliseconds since the Unix epoch. */
  now(): number;
  /** How many emulator milliseconds pass per real millisecond; `0` for a clock that only moves by hand. */
  readonly speed: number;
}

/** A clock that moves only when told to: for deterministic tests. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms` emulator milliseconds. */
  advance(ms: number): void;
}

/** Where emulator time starts unless told otherwise: a fixed, readable instant. */
const DEFAULT_EPOCH = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * A clock that follows real time, `speed` times faster.
 *
 * @example
 * const clock = createScaledClock(50); // a 10 s node takes 200 ms of real time
 */
export function createScaledClock(speed: number, realNow: () => number = Date.now): Clock {
  if (!(speed > 0) || !Number.isFinite(speed)) throw new RangeError(`speed must be a positive number, got ${String(speed)}`);
  // Emulator time starts at the real time of creation, so timestamps in payloads look current.
  const realStart = realNow();
  return { speed, now: () => realStart + (realNow() - realStart) * speed };
}

/**
 * A clock that stands still until advanced.
 *
 * @example
 * const clock = createManualClock();
 * const emulator = await createEmulator({ clock, listen: false });
 * clock.advance(1_500); // one status tick later
 */
export function createManualClock(start: number = DEFAULT_EPOCH): ManualClock {
  let current = start;
  return {
    speed: 0,
    now: () => current,
    advance(ms: number): void {
      if (!(ms >= 0)) throw new RangeError(`a clock only moves forward, got ${String(ms)} ms`);
      current += ms;
    },
  };
}
