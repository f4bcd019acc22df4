import { describe, expect, it } from 'vitest';
import { createManualClock, createScaledClock } from '../../src/emulator/index.js';

describe('clocks', () => {
  it('a scaled clock runs speed times faster than real time', () => {
    let real = 1_000_000;
    const clock = createScaledClock(50, () => real);
    const start = clock.now();
    real += 200;
    expect(clock.now() - start).toBe(10_000);
    expect(clock.speed).toBe(50);
  });

  it('refuses a speed that is not a positive number', () => {
    for (const speed of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => createScaledClock(speed)).toThrow(RangeError);
  });

  it('a manual clock stands still until advanced, and only forward', () => {
    const clock = createManualClock(5_000);
    expect(clock.now()).toBe(5_000);
    clock.advance(1_500);
    expect(clock.now()).toBe(6_500);
    expect(() => { clock.advance(-1); }).toThrow(RangeError);
    expect(clock.speed).toBe(0);
  });
});

describe('a scaled clock in another process', () => {
  it('reads the same time when given the same speed and real start', () => {
    let real = 5_000_000;
    const clock = createScaledClock(20, () => real);
    real += 1_000;
    const other = createScaledClock(20, () => real, clock.realStart);
    expect(other.now()).toBe(clock.now());
    real += 500;
    expect(other.now() - clock.realStart).toBe(1_500 * 20);
  });
});
