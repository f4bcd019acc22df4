import type { SchedulerLike } from 'rxjs';

/**
 * One time scale for everything in a bench world. The emulator runs `speed` times faster than real
 * time; flowstream's timers (all on the client's scheduler, here `emulator.scheduler`) and the
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

/** A bench world's time: the emulator's own clock and scheduler (`emulator.scheduler`). */
export function benchTime(speed: number, scheduler: SchedulerLike): BenchTime {
  return {
    speed,
    now: () => scheduler.now(),
    sleep: (ms) =>
      new Promise((resolve) => {
        scheduler.schedule(resolve, ms);
      }),
    scheduler,
  };
}
