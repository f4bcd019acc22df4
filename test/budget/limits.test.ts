import { InvalidArgumentError } from '../../src/errors/validation-errors.js';
import { describe, expect, it } from 'vitest';
import { budgetLimits } from '../../src/budget/account-rules.js';

describe('budget limits', () => {
  it('defaults to the service\'s account limits with a 5% margin (service.md §2.1)', () => {
    expect(budgetLimits()).toEqual({
      perMinute: 100,
      perDay: 10_000,
      minuteWindowMs: 62_000,
      dayWindowMs: 86_402_000,
      usablePerMinute: 95,
      usablePerDay: 9_500,
      dayReserve: 500,
      startsPerDay: 9_750,
      dayBurst: 950,
      burst: 5,
      pacingIntervalMs: 682,
      duplicateStartSpacingMs: 1_100,
      starvationLimit: 9,
    });
  });

  it('takes every option, 0 included where it makes sense', () => {
    const limits = budgetLimits({
      requestsPerMinute: 60,
      requestsPerDay: 1_000,
      safetyMargin: 0,
      dayReserve: 0,
      burst: 3,
      latencyAllowanceMs: 0,
      duplicateStartSpacingMs: 0,
      starvationLimit: 4,
    });
    expect(limits).toMatchObject({
      usablePerMinute: 60,
      usablePerDay: 1_000,
      burst: 3,
      minuteWindowMs: 60_000,
      pacingIntervalMs: Math.ceil(60_000 / 58),
      duplicateStartSpacingMs: 0,
      starvationLimit: 4,
    });
  });

  it('always keeps at least one request per window and a burst no larger than that', () => {
    expect(budgetLimits({ requestsPerMinute: 1, safetyMargin: 0.99, burst: 10 })).toMatchObject({ usablePerMinute: 1, burst: 1, pacingIntervalMs: 62_000 });
  });

  it('keeps the day\'s reserve from polls: starts take its first half, aborts all of it', () => {
    expect(budgetLimits({ requestsPerDay: 1_000, dayReserve: 0.1 })).toMatchObject({ perDay: 1_000, usablePerDay: 900, dayReserve: 100, startsPerDay: 950 });
    expect(budgetLimits({ requestsPerDay: 20 })).toMatchObject({ usablePerDay: 19, dayReserve: 1, startsPerDay: 19 });
  });

  it('takes the service\'s own limits when they are lower than configured, never when higher', () => {
    expect(budgetLimits({}, { perMinute: 60, perDay: 2_000 })).toMatchObject({ perMinute: 60, usablePerMinute: 57, perDay: 2_000, usablePerDay: 1_900, pacingIntervalMs: Math.ceil(62_000 / 53) });
    expect(budgetLimits({ requestsPerMinute: 30 }, { perMinute: 100 })).toMatchObject({ perMinute: 30 });
  });

  it.each([
    [{ requestsPerMinute: 0 }, /requestsPerMinute/],
    [{ requestsPerMinute: 1.5 }, /requestsPerMinute/],
    [{ requestsPerDay: -1 }, /requestsPerDay/],
    [{ safetyMargin: 1 }, /safetyMargin/],
    [{ safetyMargin: Number.NaN }, /safetyMargin/],
    [{ dayReserve: 1 }, /dayReserve/],
    [{ dayReserve: -0.1 }, /dayReserve/],
    [{ dayBurst: 1 }, /dayBurst/],
    [{ burst: 0 }, /burst/],
    [{ latencyAllowanceMs: -5 }, /latencyAllowanceMs/],
    [{ duplicateStartSpacingMs: Number.POSITIVE_INFINITY }, /duplicateStartSpacingMs/],
    [{ starvationLimit: 0 }, /starvationLimit/],
  ])('refuses %o', (options, message) => {
    expect(() => budgetLimits(options)).toThrow(InvalidArgumentError);
    expect(() => budgetLimits(options)).toThrow(message);
  });
});
