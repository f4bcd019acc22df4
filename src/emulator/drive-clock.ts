import type { ManualClock } from './clock.js';

/** One turn of the event loop: every promise chain that can move without a timer has moved one step. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * How to drive a manual clock: until a condition holds, or until a time; `turns` is how many turns of
 * the event loop pending work gets before time moves (an in-process request takes a few to answer).
 */
export interface DriveOptions {
  readonly until?: () => boolean;
  /** Emulator time (ms since the epoch) to stop at; time moves no further than this. */
  readonly toTime?: number;
  readonly turns?: number;
}

/**
 * Drives a manual clock as virtual time, for a client on `emulator.scheduler` and the emulator's
 * in-process `fetch`: lets pending work settle, then moves the clock to its next timer, and again,
 * until `until()` holds or `toTime` is reached. Time moves only when nothing else can, so what happens
 * at a given emulator time does not depend on the machine's speed, and a day passes in seconds.
 * Throws when nothing is left to happen before the goal.
 *
 * @example
 * const clock = createManualClock();
 * const emulator = await createEmulator({ clock, listen: false });
 * const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler });
 * let result;
 * runResult(client.run('c-sample-linear')).then((value) => (result = value));
 * await driveClock(clock, { until: () => result !== undefined });
 */
export async function driveClock(clock: ManualClock, options: DriveOptions): Promise<void> {
  const { until, toTime, turns = 5 } = options;
  if (until === undefined && toTime === undefined) throw new RangeError('driveClock needs `until` or `toTime`');
  for (;;) {
    for (let index = 0; index < turns; index++) await turn();
    if (until?.() === true) return;
    const next = clock.nextTimerAt();
    if (toTime !== undefined && (next === undefined || next > toTime)) {
      clock.advance(Math.max(0, toTime - clock.now()));
      for (let index = 0; index < turns; index++) await turn();
      return;
    }
    if (next === undefined) throw new Error('driveClock: nothing left to happen, and `until` does not hold');
    clock.advance(Math.max(0, next - clock.now()));
  }
}
