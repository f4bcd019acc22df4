import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import type { Clock } from './clock.js';

/** One scheduled piece of work, re-schedulable as RxJS's own actions are (`timer`, `interval` rely on it). */
class ClockAction<T> extends Subscription implements SchedulerAction<T> {
  #cancel: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super();
    this.add(() => {
      this.#cancel?.();
      this.#cancel = undefined;
    });
  }

  /** Whether a run of the work is waiting for its time (its work may have scheduled it again). */
  private pending(): boolean {
    return this.#cancel !== undefined;
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.#cancel?.();
    const cancel = this.clock.setTimer(() => {
      this.#cancel = undefined;
      this.work.call(this, state);
      // Not scheduled again by its work: done, as an RxJS action is.
      if (!this.pending()) this.unsubscribe();
    }, delay);
    this.#cancel = cancel;
    return this;
  }
}

/**
 * An RxJS scheduler on an emulator clock: `now()` is emulator time, and a delay is emulator
 * milliseconds — real time ÷ speed on an accelerated clock, and on a manual clock the moment
 * `advance` passes it. A client given it (`createClient({ scheduler: emulator.scheduler })`) polls,
 * paces its budget, retries and times out on the emulator's time.
 *
 * @example
 * const scheduler = clockScheduler(createScaledClock(50));
 * timer(60_000, scheduler).subscribe(() => console.log('a minute of emulator time: 1.2 s'));
 */
export function clockScheduler(clock: Clock): SchedulerLike {
  return {
    now: () => clock.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      return new ClockAction<T>(clock, work).schedule(state, delay);
    },
  };
}
