import { interval, take, timer } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clockScheduler, createManualClock, createScaledClock } from '../../src/emulator/index.js';

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
