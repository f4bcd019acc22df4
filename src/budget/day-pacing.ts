import type { BudgetLimits } from './limits.js';

/**
 * How the day is spent (so that a service that runs all day is never blind): a token bucket with
 * real capacity whose refill is what the day can sustain from now on.
 *
 * - The capacity, `dayBurst` (default a tenth of the usable day, 950), is what sporadic use spends at
 *   the minute's pace: after a quiet spell nothing slows it until then.
 * - The refill is the sustainable rate: what is left of the usable day, divided by the time until the
 *   day window gives back enough for it — the largest constant rate at which the window never reaches
 *   the usable day, given when each of our sends of the last day leaves it (`sustainableRate`). With
 *   nothing sent for a day that is the usable day per day window; after a morning's batch, what the
 *   batch left spread until the batch leaves the window; in sustained use it converges to the usable
 *   day per window, evenly. When the service's count says less (another process on the account), its
 *   remaining spread until its window can have reset, if lower.
 * - Every send takes a token — starts and aborts too, which do not wait for one (they take what is
 *   saved, never more: their sends already slow the refill) — and a poll or an interactive call goes
 *   on a whole token. The refill is computed
 *   again after every send, every send that leaves the window and every answer (after an idle spell, as
 *   if the budget had woken once a slot through it), so what was saved in the bucket never exceeds what
 *   that constant rate would have sent: polls never run into the end of the usable day (and so never
 *   into the reserve, which its count also keeps them from), and are never blind while any of it is left.
 *
 * The window is a sliding one, as for the minute: the service's day starts at whichever request comes
 * first (service.md §2.1), maybe another process's, so only a pace that is safe wherever it starts is safe.
 *
 * @example
 * ```ts
 * let bucket: DayBucket = FULL_DAY_BUCKET;
 * if (dayBucketReadyAt(bucket, now, limits) <= now) bucket = dayBucketAfterSend(bucket, now, limits);
 * ```
 */
export interface DayBucket {
  /** Whole and partial tokens as of `at`, from 0 to the capacity. */
  readonly tokens: number;
  readonly at: number;
  /** The refill in force since `at`, in tokens per ms. */
  readonly perMs: number;
}

/**
 * A bucket that has sent nothing yet: full, whatever the capacity.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(FULL_DAY_BUCKET, now, limits); // -Infinity: send at once
 * ```
 */
export const FULL_DAY_BUCKET: DayBucket = { tokens: Number.POSITIVE_INFINITY, at: Number.NEGATIVE_INFINITY, perMs: 0 };

/**
 * The day window cut into this many slots when finding the sustainable rate: 15 minutes each, so
 * finding it costs 96 binary searches of the send log, and errs low by at most a slot's departures.
 */
export const DAY_SLOTS = 96;

/**
 * The largest constant rate (per ms) from `now` at which the day window never holds more than the
 * usable day, `remaining` being what is left of it now and `leftBy(at)` how many of the window's sends
 * have left it by `at`. By then `remaining + leftBy(at)` may have been sent, so the rate is the least of
 * those over the time they take; each slot counts only what has left by its start (a lower bound).
 *
 * @example
 * ```ts
 * sustainableRate({ remaining: 9_500, leftBy: () => 0, now, windowMs: 86_402_000 }) * 60_000; // ≈ 6.6 a minute
 * ```
 */
export function sustainableRate(input: { readonly remaining: number; readonly leftBy: (at: number) => number; readonly now: number; readonly windowMs: number }): number {
  if (input.remaining <= 0) return 0;
  const slotMs = input.windowMs / DAY_SLOTS;
  let rate = Number.POSITIVE_INFINITY;
  for (let slot = 1; slot <= DAY_SLOTS; slot++) {
    const freed = input.leftBy(input.now + (slot - 1) * slotMs);
    rate = Math.min(rate, (input.remaining + freed) / (slot * slotMs));
  }
  return rate;
}

/**
 * The bucket refilled up to `now` at the rate in force.
 *
 * @example
 * ```ts
 * dayBucketAt(bucket, now, limits).tokens; // what may go at once
 * ```
 */
export function dayBucketAt(bucket: DayBucket, now: number, limits: BudgetLimits): DayBucket {
  const refill = bucket.perMs > 0 && now > bucket.at ? (now - bucket.at) * bucket.perMs : 0;
  return { tokens: Math.min(limits.dayBurst, bucket.tokens + refill), at: Math.max(now, bucket.at), perMs: bucket.perMs };
}

/**
 * The bucket from `now` on refilled at `perMs` (what it held until `now` filled at the old rate).
 *
 * @example
 * ```ts
 * bucket = dayBucketRefilledAt(bucket, now, sustainableRate(input), limits);
 * ```
 */
export function dayBucketRefilledAt(bucket: DayBucket, now: number, perMs: number, limits: BudgetLimits): DayBucket {
  return { ...dayBucketAt(bucket, now, limits), perMs: Math.max(0, perMs) };
}

/**
 * When the day lets the next poll or interactive call go: once a whole token is there. With no refill
 * it defers to the day's count and the service's cap, which say when something frees up.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(bucket, now, limits) <= now; // the day allows a poll now
 * ```
 */
export function dayBucketReadyAt(bucket: DayBucket, now: number, limits: BudgetLimits): number {
  const { tokens, perMs } = dayBucketAt(bucket, now, limits);
  // A token refilled in pieces can miss 1 by a rounding error: that is a whole token.
  if (tokens >= 1 - 1e-9 || perMs <= 0) return Number.NEGATIVE_INFINITY;
  return now + (1 - tokens) / perMs;
}

/**
 * The bucket after a send at `now`, of any class: a token less, or none left when a start or an abort
 * went without a whole one.
 *
 * @example
 * ```ts
 * bucket = dayBucketAfterSend(bucket, now, limits);
 * ```
 */
export function dayBucketAfterSend(bucket: DayBucket, now: number, limits: BudgetLimits): DayBucket {
  const refilled = dayBucketAt(bucket, now, limits);
  return { ...refilled, tokens: Math.max(0, refilled.tokens - 1) };
}

/**
 * When the bucket would be empty, and polls down to the sustainable pace, if the last hour's pace went
 * on (`sentLastHour`); `undefined` when the refill keeps up with it.
 *
 * @example
 * ```ts
 * dayBucketEmptyAt(bucket, now, sentLastHour, limits); // a time, or undefined
 * ```
 */
export function dayBucketEmptyAt(bucket: DayBucket, now: number, sentLastHour: number, limits: BudgetLimits): number | undefined {
  const { tokens, perMs } = dayBucketAt(bucket, now, limits);
  const drainPerHour = sentLastHour - perMs * HOUR_MS;
  if (drainPerHour <= 0) return undefined;
  return now + (Math.max(0, tokens) / drainPerHour) * HOUR_MS;
}

const HOUR_MS = 3_600_000;
