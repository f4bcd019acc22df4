import type { ManualClock } from '../../src/emulator/index.js';

/** One turn of the event loop: every promise chain that can move without a timer has moved. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Drives a manual emulator clock as virtual time: lets all pending I/O of the in-process fetch
 * settle, then moves the clock to its next timer, until `done()` or nothing is left to happen. Time
 * only moves when nothing else can, so what happens at a given emulator time does not depend on how
 * fast the machine is.
 */
export async function runOnManualClock(clock: ManualClock, done: () => boolean, limitMs = 24 * 3_600_000): Promise<void> {
  const start = clock.now();
  for (;;) {
    // Several turns: a request in flight takes a few (body streams, ky's hooks) to come back.
    for (let index = 0; index < 5; index++) await turn();
    if (done()) return;
    const next = clock.nextTimerAt();
    if (next === undefined) throw new Error('nothing left to happen, and not done');
    if (next - start > limitMs) throw new Error(`not done within ${limitMs} ms of emulator time`);
    clock.advance(Math.max(0, next - clock.now()));
  }
}
