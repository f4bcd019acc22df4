import type { ServerView } from '../domain/budget.js';
import type { RequestBudgetOptions } from '../domain/options.js';
import type { GateTicket } from '../domain/requests.js';
import { DAY_SLOTS, dayBucketAfterSend, dayBucketAt, dayBucketReadyAt, dayBucketRefilledAt, FULL_DAY_BUCKET, sustainableRate } from './day-pacing.js';
import type { DayBucket } from './day-pacing.js';
import { identicalStartKey, StartMarks } from './duplicate-starts.js';
import type { FairClass } from './fair-queue.js';
import { InFlight } from './in-flight.js';
import { budgetLimits } from './limits.js';
import type { BudgetLimits, ServerLimits } from './limits.js';
import { IDLE_PACER, pacerAfterSend, pacerReadyAt } from './pacing.js';
import type { Pacer } from './pacing.js';
import { SendLog } from './send-log.js';
import { capAbortReadyAt, capAfterSend, capReadyAt, capStartRefusedUntil } from './server-cap.js';
import type { ServerCap } from './server-cap.js';

/** Per scope (the service's two windows), a flag or a time. */
export interface PerScope<T> {
  minute: T;
  day: T;
}

/** Over how many minutes the day bucket's tokens are planned to be spent when runs poll (`readsPerMinute`). */
const HEADROOM_HORIZON_MINUTES = 15;

/**
 * Everything the budget knows of the account, whoever's requests they are: the limits in force, the
 * minute's pacer and the day's, our sends of the last day, the requests in flight, the pause after a
 * 429, the caps read off the service's headers and the identical-start marks (the account
 * seam). The queue is not here: which request goes is the scheduler's, whether one may go is this.
 * Every question it answers costs O(1) or one binary search of the send log; a send, an answer or a
 * send leaving the day window also sets the day's pace again (96 binary searches, `repaceDay`), after
 * an idle spell once per slot of it in which sends left (96 times at most).
 */
export class AccountState {
  limits: BudgetLimits;
  #serverLimits: ServerLimits = {};
  pacer: Pacer = IDLE_PACER;
  dayBucket: DayBucket = FULL_DAY_BUCKET;
  readonly sends = new SendLog();
  lastSendAt = Number.NEGATIVE_INFINITY;
  readonly inFlight = new InFlight();
  /** After a 429 nothing is sent before this time. */
  pausedUntil = Number.NEGATIVE_INFINITY;
  minuteCap: ServerCap | undefined;
  dayCap: ServerCap | undefined;
  /** The last `X-RateLimit-Remaining-*` values the service sent, for UIs and logs. */
  server: ServerView = {};
  /** Per scope, until when the service's last word was "0 remaining" (see `followServer`). */
  readonly zeroUntil: PerScope<number> = { minute: Number.NEGATIVE_INFINITY, day: Number.NEGATIVE_INFINITY };
  /** Per scope, whether the service's remaining count proved meaningless and is no longer followed. */
  readonly ignoring: PerScope<boolean> = { minute: false, day: false };
  readonly starts: StartMarks;

  constructor(private readonly options: RequestBudgetOptions) {
    this.limits = budgetLimits(options);
    this.starts = new StartMarks(this.limits.duplicateStartSpacingMs);
  }

  /** Lets go of what `now` has made obsolete; returns the identical-start keys now free. */
  prune(now: number): string[] {
    this.#catchUpIdleDay(now);
    this.#pruneDay(now);
    if (this.minuteCap !== undefined && now >= this.minuteCap.until) this.minuteCap = undefined;
    return this.starts.prune(now);
  }

  /**
   * Sets the day bucket's refill from `now` to what the day sustains now (day-pacing.ts): by our own
   * sends and when each leaves the window, and by the service's count when it says less. Called after
   * every send, every departure from the window and every answer, not per step: O(log n) × 96.
   */
  repaceDay(now: number): void {
    const { limits, sends, dayCap } = this;
    const ours = sustainableRate({
      remaining: limits.usablePerDay - sends.within(now, limits.dayWindowMs),
      leftBy: (at) => sends.leftBy(at, limits.dayWindowMs),
      now,
      windowMs: limits.dayWindowMs,
    });
    const theirs = dayCap !== undefined && now < dayCap.until ? dayCap.allowance / (dayCap.until - now) : Number.POSITIVE_INFINITY;
    this.dayBucket = dayBucketRefilledAt(this.dayBucket, now, Math.min(ours, theirs), limits);
  }

  /** The day at `at`: the sends that left its window go, and so does a cap that ended; either gives the day back, so its pace quickens. */
  #pruneDay(at: number): void {
    const before = this.sends.length;
    this.sends.prune(at, this.limits.dayWindowMs);
    const dayCapEnded = this.dayCap !== undefined && at >= this.dayCap.until;
    if (dayCapEnded) this.dayCap = undefined;
    if (this.sends.length !== before || dayCapEnded) this.repaceDay(at);
  }

  /**
   * Catches the day up with an idle spell before `now`. With nothing sent or answered, nothing set the
   * day's pace again as its sends left the window: the bucket would fill at the pace it had when the
   * spell began (a trickle, after a busy day), and only `now` would set the day's new pace, though the
   * day came back all through the spell. Instead the day is pruned as if the budget had woken once a
   * slot (day-pacing.ts) through the spell, until no send is left to leave the window or the bucket is
   * full: after either it only refills (a full one stays full, an empty window's pace no longer
   * changes). Every send leaves within a day of the bucket's last refill (a send refills it), so that
   * is a day's slots at most, however long the spell.
   */
  #catchUpIdleDay(now: number): void {
    const { limits, sends } = this;
    const from = this.dayBucket.at;
    const slotMs = limits.dayWindowMs / DAY_SLOTS;
    for (let slot = 1; this.dayBucket.tokens < limits.dayBurst && sends.length > 0 && from + slot * slotMs < now; slot++) this.#pruneDay(from + slot * slotMs);
  }

  /**
   * Takes the service's limits when they are lower than configured (service.md §2.1 names them on every
   * answer past auth): the pacer's spacing and every count follow at once. A value below 1 says
   * nothing usable and is ignored.
   */
  adoptServerLimits(perMinute: number | undefined, perDay: number | undefined): void {
    const next: ServerLimits = {
      ...this.#serverLimits,
      ...(perMinute !== undefined && perMinute >= 1 ? { perMinute } : {}),
      ...(perDay !== undefined && perDay >= 1 ? { perDay } : {}),
    };
    if (next.perMinute === this.#serverLimits.perMinute && next.perDay === this.#serverLimits.perDay) return;
    this.#serverLimits = next;
    this.limits = budgetLimits(this.options, next);
  }

  /**
   * The pace the account can give the runs' reads from `now` on, per minute: the minute's usable
   * count, or less when the day is tight — its sustainable pace plus what its bucket holds, spread
   * over the next quarter hour, so that a full bucket lets the runs poll fast and an emptying one
   * slows them smoothly, before the bucket's own limit would.
   */
  readsPerMinute(now: number): number {
    const { limits } = this;
    const bucket = dayBucketAt(this.dayBucket, now, limits);
    return Math.min(limits.usablePerMinute, bucket.perMs * 60_000 + Math.max(0, bucket.tokens) / HEADROOM_HORIZON_MINUTES);
  }

  /** What is left of the day to polls and interactive calls at `now`: by our count, or the service's cap. */
  pacedRemaining(now: number): number {
    const { limits, dayCap } = this;
    const byCount = limits.usablePerDay - this.sends.within(now, limits.dayWindowMs);
    return dayCap !== undefined && now < dayCap.until ? Math.min(byCount, dayCap.allowance) : byCount;
  }

  /** When a request of `klass` may go, as far as the account goes (a single start may wait longer, see start-lines.ts). */
  readyAt(klass: FairClass, now: number): number {
    const { limits, sends } = this;
    switch (klass) {
      // An execution left running spends the account's credits, so an abort takes the fastest rate the
      // service's count allows rather than the pacer's smooth one: no more than the service's own limit
      // in any of our windows (the safety margin and the day's reserve are what aborts may use), not
      // before a 429's pause ends, and ahead of a server cap's spread while that count is above zero.
      case 'abort':
        return Math.max(
          this.pausedUntil,
          capAbortReadyAt(this.minuteCap, now),
          capAbortReadyAt(this.dayCap, now),
          sends.readyAt(limits.perMinute, limits.minuteWindowMs),
          sends.readyAt(limits.perDay, limits.dayWindowMs),
        );
      // A start is paced like a poll within the minute, and may take the first half of the day's
      // reserve; when even that is spent it is refused (`startRefusedUntil`), not kept waiting.
      case 'start':
        return Math.max(this.#minuteReadyAt(now), sends.readyAt(limits.startsPerDay, limits.dayWindowMs));
      case 'interactive':
      case 'reads':
        return this.#pacedReadyAt(now);
      default:
        return unreachable(klass);
    }
  }

  /**
   * Until when a start is refused because the day is spent for starts — by our count, or by the
   * service's (another process used it) — or `undefined` when a start may go today.
   */
  startRefusedUntil(now: number): number | undefined {
    const { limits } = this;
    const byCount = this.sends.readyAt(limits.startsPerDay, limits.dayWindowMs);
    const byServer = capStartRefusedUntil(this.dayCap, now, limits.perDay - limits.startsPerDay) ?? Number.NEGATIVE_INFINITY;
    const until = Math.max(byCount, byServer);
    return until > now ? until : undefined;
  }

  /** `ticket` was let through at `now`. */
  sent(ticket: GateTicket, now: number): void {
    const { limits } = this;
    this.dayBucket = dayBucketAfterSend(this.dayBucket, now, limits);
    this.pacer = pacerAfterSend(this.pacer, now, limits);
    this.sends.push(now);
    this.repaceDay(now);
    this.lastSendAt = now;
    this.inFlight.add(ticket, now);
    this.minuteCap = capAfterSend(this.minuteCap, now);
    this.dayCap = capAfterSend(this.dayCap, now);
    const key = identicalStartKey(ticket);
    if (key !== undefined) this.starts.mark(key, now, 'sent');
  }

  /** When polls and interactive calls may go: the minute's limits, the day's count, its bucket and the service's cap. */
  #pacedReadyAt(now: number): number {
    const { limits } = this;
    return Math.max(
      this.#minuteReadyAt(now),
      capReadyAt(this.dayCap, now),
      this.sends.readyAt(limits.usablePerDay, limits.dayWindowMs),
      dayBucketReadyAt(this.dayBucket, now, limits),
    );
  }

  /** The minute's limits for everything paced: the pacer, a 429's pause, the service's cap, our count. */
  #minuteReadyAt(now: number): number {
    const { limits } = this;
    return Math.max(
      pacerReadyAt(this.pacer, limits),
      this.pausedUntil,
      capReadyAt(this.minuteCap, now),
      // The pacer bounds every minute-long window of paced sends; aborts are not paced, so every
      // window is also bounded by counting (service.md §2.1).
      this.sends.readyAt(limits.usablePerMinute, limits.minuteWindowMs),
    );
  }
}

function unreachable(value: never): never {
  throw new Error(`Unexpected budget class: ${String(value)}`);
}
