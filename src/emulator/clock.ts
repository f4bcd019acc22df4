/**
 * Emulator time. Every service duration (node durations, the status tick, message batches, timeouts,
 * rate-limit windows, the duplicate-run window, fileKey expiry) is measured on one clock, so that
 * accelerating it or driving it by hand changes all of them together. Its timers are what
 * `emulator.scheduler` runs on, so a client given that scheduler lives on the same time.
 */
export interface Clock {
  /** Current emulator time, in milliseconds since the Unix epoch. */
  now(): number;
  /** How many emulator milliseconds pass per real millisecond; `0` for a clock that only moves by hand. */
  readonly speed: number;
  /** Calls `callback` once `delayMs` of emulator time have passed; the function returned cancels it. */
  setTimer(callback: () => void, delayMs: number): () => void;
}

/** A clock that follows real time, faster. */
export interface ScaledClock extends Clock {
  /** The real instant (ms since the epoch) at which emulator time equals real time. */
  readonly realStart: number;
}

/** A clock that moves only when told to: for deterministic tests. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms` emulator milliseconds, firing the timers due on the way, in order. */
  advance(ms: number): void;
  /** When the earliest pending timer is due (emulator time), or `undefined` when none is pending. */
  nextTimerAt(): number | undefined;
}

/** Where emulator time starts unless told otherwise: a fixed, readable instant. */
const DEFAULT_EPOCH = Date.parse('2026-01-01T00:00:00.000Z');

/** Node's and browsers' timers keep at most 2^31 − 1 ms; a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A clock that follows real time, `speed` times faster. `realStart` is the real instant (ms since the
 * epoch) from which it runs faster, by default now: another process given the same `speed` and
 * `realStart` (`emulator.clock.realStart`) reads the same time, so a fleet of clients lives on one
 * emulator's clock.
 *
 * @example
 * const clock = createScaledClock(50); // a 10 s node takes 200 ms of real time
 * const same = createScaledClock(50, Date.now, clock.realStart); // in a worker process
 */
export function createScaledClock(speed: number, realNow: () => number = Date.now, realStart: number = realNow()): ScaledClock {
  if (!(speed > 0) || !Number.isFinite(speed)) throw new RangeError(`speed must be a positive number, got ${String(speed)}`);
  // Emulator time starts at the real time of creation, so timestamps in payloads look current.
  const now = (): number => realStart + (realNow() - realStart) * speed;
  return {
    speed,
    realStart,
    now,
    setTimer(callback, delayMs) {
      const due = now() + Math.max(0, delayMs);
      let handle: ReturnType<typeof setTimeout>;
      // A real timer may fire a little before emulator time reaches `due` (rounding of ms ÷ speed): wait the rest.
      const arm = (): void => {
        handle = setTimeout(() => {
          const left = due - now();
          if (left > 0) arm();
          else callback();
        }, Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil((due - now()) / speed))));
      };
      arm();
      return () => {
        clearTimeout(handle);
      };
    },
  };
}

interface PendingTimer {
  readonly due: number;
  readonly order: number;
  readonly callback: () => void;
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
  let order = 0;
  // Few timers are pending at once (a client's poll, deadline and budget timers): a sorted array is enough.
  let pending: PendingTimer[] = [];
  return {
    speed: 0,
    now: () => current,
    setTimer(callback, delayMs) {
      const timer: PendingTimer = { due: current + Math.max(0, delayMs), order: order++, callback };
      pending = [...pending, timer].sort((a, b) => a.due - b.due || a.order - b.order);
      return () => {
        pending = pending.filter((other) => other !== timer);
      };
    },
    nextTimerAt: () => pending[0]?.due,
    advance(ms: number): void {
      if (!(ms >= 0)) throw new RangeError(`a clock only moves forward, got ${String(ms)} ms`);
      const target = current + ms;
      // Timers set by a timer that are due before the target fire in the same advance, as time passes them.
      for (let next = pending[0]; next !== undefined && next.due <= target; next = pending[0]) {
        pending = pending.slice(1);
        current = Math.max(current, next.due);
        next.callback();
      }
      current = target;
    },
  };
}
