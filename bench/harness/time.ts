import { asyncScheduler, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';

/**
 * One time scale for everything in a bench world. The emulator runs `speed` times faster than real
 * time; flowstream's timers (the run cadence on an RxJS scheduler, the budget on its clock) and the
 * baseline loops' sleeps must run on the same scale, so that every duration the library and the
 * baselines use — 500 ms–10 s cadence, 3 s output spacing, 3 s settling window, the 2 s and 1 s
 * loops, the budget's minute — is an emulator duration, and every latency we report is in emulator ms.
 */
export interface BenchTime {
  readonly speed: number;
  /** Emulator ms. */
  now(): number;
  /** Waits `ms` emulator milliseconds. */
  sleep(ms: number): Promise<void>;
  /** An RxJS scheduler whose `now()` is emulator time and whose delays are emulator ms. */
  readonly scheduler: SchedulerLike;
}

export function benchTime(speed: number, now: () => number): BenchTime {
  return {
    speed,
    now,
    sleep: (ms) =>
      new Promise((resolve) => {
        setTimeout(resolve, ms / speed);
      }),
    scheduler: scaledScheduler(speed, now),
  };
}

/**
 * `asyncScheduler` with delays divided by `speed`, also when an action reschedules itself. Only the
 * public `SchedulerLike` surface is used (no `rxjs/internal`).
 */
function scaledScheduler(speed: number, now: () => number): SchedulerLike {
  return {
    now,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      return asyncScheduler.schedule<T>(
        function (this: SchedulerAction<T>, current?: T) {
          work.call(rescaled(this, speed), current);
        },
        delay / speed,
        state,
      );
    },
  };
}

/** The action as `work` sees it: rescheduling itself with an emulator delay. */
function rescaled<T>(action: SchedulerAction<T>, speed: number): SchedulerAction<T> {
  return Object.assign(Object.create(action) as SchedulerAction<T>, {
    schedule: (state?: T, delay = 0) => action.schedule(state, delay / speed),
  });
}
