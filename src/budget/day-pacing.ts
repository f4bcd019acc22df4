import type { BudgetLimits } from './limits.js';

/**
 * How the day is spent (DESIGN.md: a service that runs all day is never blind). Polls and interactive
 * calls may use the day less its reserve; what is left of that, `remaining`, is spent no faster than
 * over a twentieth of the day window, 72 minutes: the day pacer is a token bucket of `burst` tokens
 * refilled one per `window / (20 × remaining)`.
 *
 * - Sporadic use bursts: with the day untouched the spacing is 455 ms (9,500 left), below the
 *   minute's 682 ms, so the day does not slow anything until about a third of it is spent in a spell.
 * - Sustained use converges: at a steady rate r the day window holds r × W sends, so the spacing
 *   settles where 1/r = W / (20 × (U − r × W)), at r = 20/21 × U / W — 95% of the most a day can
 *   sustain for ever (U per day window), about 6.3 requests a minute by default.
 * - It is never blind: the spacing grows as the day fills and shrinks as earlier sends leave the
 *   window, so it never reaches the end of the usable day, where nothing more could go until earlier
 *   sends leave.
 *
 * The window is a sliding one, as for the minute: the service's day starts at whichever request comes
 * first (PROTOCOL §2.1), maybe another process's, so only a pace safe wherever it starts is safe.
 * Starts and aborts do not wait for this pacer (they may take the reserve); their sends count in the
 * day, which slows the polls after them.
 *
 * @example
 * ```ts
 * daySpacingMs(9_500, budgetLimits()); // ≈ 455 ms
 * ```
 */
export const DAY_SPREAD = 20;

/**
 * The spacing the day allows polls and interactive calls when `remaining` is left to them.
 *
 * @example
 * ```ts
 * daySpacingMs(0, limits); // Infinity: nothing left
 * ```
 */
export function daySpacingMs(remaining: number, limits: BudgetLimits): number {
  return remaining > 0 ? limits.dayWindowMs / (DAY_SPREAD * remaining) : Number.POSITIVE_INFINITY;
}

/**
 * The day's token bucket: `tokens` (at most `burst`) as of `at`. It refills at one token per
 * `daySpacingMs(remaining)`, a rate that changes as the day fills and empties, so it is kept as a
 * level rather than a theoretical arrival time (whose burst credit would grow with the spacing).
 *
 * @example
 * ```ts
 * let bucket: DayBucket = FULL_DAY_BUCKET;
 * ```
 */
export interface DayBucket {
  readonly tokens: number;
  readonly at: number;
}

/**
 * A bucket that has sent nothing yet: full, whatever the burst.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(FULL_DAY_BUCKET, now, 9_500, limits); // -Infinity: send at once
 * ```
 */
export const FULL_DAY_BUCKET: DayBucket = { tokens: Number.POSITIVE_INFINITY, at: Number.NEGATIVE_INFINITY };

/**
 * The bucket refilled up to `now` at the pace `remaining` allows (nothing refills with nothing left).
 *
 * @example
 * ```ts
 * dayBucketAt(bucket, now, remaining, limits).tokens; // what may go at once
 * ```
 */
export function dayBucketAt(bucket: DayBucket, now: number, remaining: number, limits: BudgetLimits): DayBucket {
  const refill = remaining > 0 && now > bucket.at ? (now - bucket.at) / daySpacingMs(remaining, limits) : 0;
  return { tokens: Math.min(limits.burst, bucket.tokens + refill), at: Math.max(now, bucket.at) };
}

/**
 * When the day lets the next poll go. With nothing left it defers to the day's count and the
 * service's cap, which say when something frees up.
 *
 * @example
 * ```ts
 * dayBucketReadyAt(bucket, now, remaining, limits) <= now; // the day allows a poll now
 * ```
 */
export function dayBucketReadyAt(bucket: DayBucket, now: number, remaining: number, limits: BudgetLimits): number {
  if (remaining <= 0) return Number.NEGATIVE_INFINITY;
  const { tokens } = dayBucketAt(bucket, now, remaining, limits);
  // A token refilled in pieces can miss 1 by a rounding error: that is a whole token.
  return tokens >= 1 - 1e-9 ? Number.NEGATIVE_INFINITY : now + (1 - tokens) * daySpacingMs(remaining, limits);
}

/**
 * The bucket after a poll or interactive call sent at `now` with `remaining` left before it.
 *
 * @example
 * ```ts
 * bucket = dayBucketAfterSend(bucket, now, remaining, limits);
 * ```
 */
export function dayBucketAfterSend(bucket: DayBucket, now: number, remaining: number, limits: BudgetLimits): DayBucket {
  const refilled = dayBucketAt(bucket, now, remaining, limits);
  return { tokens: refilled.tokens - 1, at: refilled.at };
}

/**
 * Requests per minute the day allows polls and interactive calls now.
 *
 * @example
 * ```ts
 * sustainablePerMinute(9_500, budgetLimits()); // ≈ 132
 * ```
 */
export function sustainablePerMinute(remaining: number, limits: BudgetLimits): number {
  return remaining > 0 ? 60_000 / daySpacingMs(remaining, limits) : 0;
}

/**
 * When polls would have nothing left if the last hour's pace went on (`sentLastHour`), less what
 * leaves the window in the next hour (`leavingNextHour`); `undefined` when that pace can go on.
 *
 * @example
 * ```ts
 * projectedExhaustion({ now, remaining: 600, sentLastHour: 400, leavingNextHour: 100 }); // now + 2 h
 * ```
 */
export function projectedExhaustion(input: { readonly now: number; readonly remaining: number; readonly sentLastHour: number; readonly leavingNextHour: number }): number | undefined {
  const drainPerHour = input.sentLastHour - input.leavingNextHour;
  if (drainPerHour <= 0) return undefined;
  return input.now + (Math.max(0, input.remaining) / drainPerHour) * HOUR_MS;
}

const HOUR_MS = 3_600_000;
