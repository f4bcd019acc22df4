import { interval, take, timer } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clockScheduler, createManualClock, createScaledClock, driveClock } from '../../src/emulator/index.js';

describe('emulator clocks keep timers', () => {
  it('a manual clock fires its timers in order as advance passes them, also those set by a timer on the way', () => {
    const clock = createManualClock(0);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 200);
    clock.setTimer(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimer(() => fired.push(`c@${clock.now()}`), 50);
    }, 100);
    const cancel = clock.setTimer(() => fired.push('never'), 120);
    cancel();
    expect(clock.nextTimerAt()).toBe(100);
    clock.advance(1_000);
    expect(fired).toEqual(['a@100', 'c@150', 'b@200']);
    expect(clock.now()).toBe(1_000);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  describe('a scaled clock', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('fires a timer of a minute of emulator time after 1.2 s of real time at speed 50', () => {
      const clock = createScaledClock(50);
      let fired = false;
      clock.setTimer(() => (fired = true), 60_000);
      vi.advanceTimersByTime(1_199);
      expect(fired).toBe(false);
      vi.advanceTimersByTime(1);
      expect(fired).toBe(true);
    });
  });
});

describe('emulator.scheduler (clockScheduler)', () => {
  it('runs RxJS timers on emulator time: interval ticks as the manual clock passes them', () => {
    const clock = createManualClock(0);
    const scheduler = clockScheduler(clock);
    const ticks: number[] = [];
    interval(1_000, scheduler).pipe(take(3)).subscribe(() => ticks.push(scheduler.now()));
    clock.advance(2_500);
    expect(ticks).toEqual([1_000, 2_000]);
    clock.advance(10_000);
    expect(ticks).toEqual([1_000, 2_000, 3_000]);
    // take(3) unsubscribed the interval: nothing is left pending.
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('drops a timer whose subscription ends before it is due', () => {
    const clock = createManualClock(0);
    const seen: number[] = [];
    const subscription = timer(500, clockScheduler(clock)).subscribe((value) => seen.push(value));
    subscription.unsubscribe();
    expect(clock.nextTimerAt()).toBeUndefined();
    clock.advance(1_000);
    expect(seen).toEqual([]);
  });
});

describe('driveClock', () => {
  it('moves a manual clock from timer to timer, letting promise work settle in between, up to a time', async () => {
    const clock = createManualClock(0);
    const scheduler = clockScheduler(clock);
    const seen: number[] = [];
    // Each tick starts async work whose result schedules the next tick: time must wait for it.
    const tick = (): void => {
      scheduler.schedule(() => {
        void Promise.resolve().then(() => {
          seen.push(clock.now());
          if (seen.length < 3) tick();
        });
      }, 1_000);
    };
    tick();
    await driveClock(clock, { toTime: 10_000 });
    expect(seen).toEqual([1_000, 2_000, 3_000]);
    expect(clock.now()).toBe(10_000);
  });

  it('stops as soon as its condition holds, and says so when nothing is left to happen', async () => {
    const clock = createManualClock(0);
    let done = false;
    clockScheduler(clock).schedule(() => (done = true), 5_000);
    await driveClock(clock, { until: () => done });
    expect(clock.now()).toBe(5_000);
    await expect(driveClock(clock, { until: () => false })).rejects.toThrow(/nothing left to happen/);
  });
});
