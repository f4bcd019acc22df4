import type { BudgetLimits } from './limits.js';

/**
 * How the day is spent (DESIGN.md: a service that runs all day is never blind): a token bucket with
 * real capacity, the day's counterpart of the minute's pacer. It holds `dayBurst` tokens (default a
 * tenth of the usable day, 950) and refills one per `dayRefillMs` = W / (U − B + 1), W the day window,
 * U the day less its reserve (9,500), B the capacity. Every send takes a token — starts and aborts
 * too, which may leave it in debt since they do not wait for it — and a poll or an interactive call
 * goes only on a whole token.
 *
 * - Sporadic use bursts: after a quiet spell the bucket is full, and 950 requests go at the minute's
 *   pace before the day slows anything.
 * - Sustained use converges to what the day can sustain: (U − B + 1) per day window, 8,551 a day or
 *   5.9 a minute, evenly, instead of spending the day by the afternoon and waiting blind for the rest.
 * - Polls never take the reserve, and it is never blind: as for the minute (see `budgetLimits`), a
 *   whole token at `now` means the day window before `now` holds fewer than U sends, whoever sent them,
 *   so the count that keeps polls out of the reserve never has to stop them; they go at the refill
 *   pace, one every 10 s, however full the day.
 *
 * Why not spread what is left over the time to the window's reset: the service's day starts at
 * whichever request comes first (PROTOCOL §2.1), maybe another process's, so its reset is unknown and
 * only a pace that is safe wherever the window starts is safe — and what is spent now comes back only
 * a day later. Spreading the remaining count over a short horizon spent the day in a third of it and
 * echoed that burst every day after; over the whole window it allows no burst at all.
 *
 * @example
 * ```ts
 * let bucket: DayBucket = FULL_DAY_BUCKET;
 * if (dayBucketReadyAt(bucket, now, limits) <= now) bucket = dayBucketAfterSend(bucket, now, limits);
 * ```
 */
export interface DayBucket {
  /** Whole and partial tokens as of `at`: at most the capacity, below 0 when starts and aborts borrowed. */
  readonly tokens: number;
  readonly at: number;
}

/**
 * A bucket that has sent nothing yet: full, whatever the capacity.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(FULL_DAY_BUCKET, now, limits); // -Infinity: send at once
 * ```
 */
export const FULL_DAY_BUCKET: DayBucket = { tokens: Number.POSITIVE_INFINITY, at: Number.NEGATIVE_INFINITY };

/**
 * The bucket refilled up to `now`.
 *
 * @example
 * ```ts
 * dayBucketAt(bucket, now, limits).tokens; // what may go at once
 * ```
 */
export function dayBucketAt(bucket: DayBucket, now: number, limits: BudgetLimits): DayBucket {
  const refill = now > bucket.at ? (now - bucket.at) / limits.dayRefillMs : 0;
  return { tokens: Math.min(limits.dayBurst, bucket.tokens + refill), at: Math.max(now, bucket.at) };
}

/**
 * When the day lets the next poll or interactive call go: once a whole token is there.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(bucket, now, limits) <= now; // the day allows a poll now
 * ```
 */
export function dayBucketReadyAt(bucket: DayBucket, now: number, limits: BudgetLimits): number {
  const { tokens } = dayBucketAt(bucket, now, limits);
  // A token refilled in pieces can miss 1 by a rounding error: that is a whole token.
  return tokens >= 1 - 1e-9 ? Number.NEGATIVE_INFINITY : now + (1 - tokens) * limits.dayRefillMs;
}

/**
 * The bucket after a send at `now`, of any class.
 *
 * @example
 * ```ts
 * bucket = dayBucketAfterSend(bucket, now, limits);
 * ```
 */
export function dayBucketAfterSend(bucket: DayBucket, now: number, limits: BudgetLimits): DayBucket {
  const refilled = dayBucketAt(bucket, now, limits);
  return { tokens: refilled.tokens - 1, at: refilled.at };
}

/**
 * What the day can sustain, in requests per minute: the bucket's refill.
 *
 * @example
 * ```ts
 * sustainablePerMinute(budgetLimits()); // ≈ 5.94
 * ```
 */
export function sustainablePerMinute(limits: BudgetLimits): number {
  return 60_000 / limits.dayRefillMs;
}

/**
 * When the bucket would be empty, and polls down to the sustained pace, if the last hour's pace went
 * on (`sentLastHour`); `undefined` when the refill keeps up with it.
 *
 * @example
 * ```ts
 * dayBucketEmptyAt({ now, tokens: 600, sentLastHour: 400 }, limits); // about now + 1.7 h
 * ```
 */
export function dayBucketEmptyAt(input: { readonly now: number; readonly tokens: number; readonly sentLastHour: number }, limits: BudgetLimits): number | undefined {
  const drainPerHour = input.sentLastHour - HOUR_MS / limits.dayRefillMs;
  if (drainPerHour <= 0) return undefined;
  return input.now + (Math.max(0, input.tokens) / drainPerHour) * HOUR_MS;
}

const HOUR_MS = 3_600_000;
