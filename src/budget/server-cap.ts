/**
 * What the service told us about its own count, when it counts more than we sent: another process
 * shares the account (service.md §2.1), or the account's limit is lower than configured. A cap allows
 * polls and interactive calls `allowance` more sends before `until` (when the service's window can
 * have reset), at least `spacingMs` apart so they spread over that time instead of leaving at once;
 * starts and aborts may also take the reserve, down to what the service's count itself allows.
 *
 * @example
 * ```ts
 * const cap = serverCap({ remaining: 40, sentAt, now, windowMs: 62_000, reserve: 5, inFlight: 2, lastSendAt, spread: true });
 * capReadyAt(cap, now); // when the next poll may go, as far as the service's count allows
 * ```
 */
export interface ServerCap {
  readonly until: number;
  /** What polls and interactive calls may still take: the service's count less ours in flight and the reserve. */
  readonly allowance: number;
  /**
   * What the service's count itself still allows, the reserve included: an abort may use it, ahead of
   * the spread, while it is above zero (an execution left running spends credits, service.md §3.5), and a
   * start down to the part of the reserve kept for aborts.
   */
  readonly hardAllowance: number;
  readonly spacingMs: number;
  readonly notBefore: number;
  /**
   * A day with nothing left for polls cannot be waited out blind: one request may look again each
   * `everyMs` (from `at`), and its answer says whether the day has reset.
   */
  readonly look?: { readonly at: number; readonly everyMs: number };
}

/**
 * What `serverCap` needs from a report.
 *
 * @example
 * ```ts
 * const input: ServerCapInput = { remaining: 40, sentAt: 900, now: 1_000, windowMs: 62_000, reserve: 5, inFlight: 0, lastSendAt: 900, spread: true };
 * ```
 */
export interface ServerCapInput {
  /** The `X-RateLimit-Remaining-*` value of the answer. */
  readonly remaining: number;
  /** When the answered request was sent. */
  readonly sentAt: number;
  /** When the answer came. */
  readonly now: number;
  /** Our window: the service's plus the latency allowance. */
  readonly windowMs: number;
  /** Requests polls leave unused (the minute's safety margin, the day's reserve). */
  readonly reserve: number;
  /** Our other requests on their way, which the service may not have counted yet. */
  readonly inFlight: number;
  readonly lastSendAt: number;
  /** Spread the allowance over the window (per minute) or only stop at zero (per day, too long to spread). */
  readonly spread: boolean;
  /** With nothing left for polls, how long until one may look again (per day: a minute's window). */
  readonly lookEveryMs?: number;
}

/**
 * The cap a report imposes. The service's window that counted the request began at or before the
 * request arrived, which was within the latency allowance of `sentAt`, so that window has reset by
 * `sentAt + windowMs`; until then at most `remaining` requests are left, minus ours already on their
 * way and, for polls, the reserve.
 *
 * @example
 * ```ts
 * serverCap({ remaining: 40, sentAt: 0, now: 0, windowMs: 62_000, reserve: 5, inFlight: 0, lastSendAt: 0, spread: true }).spacingMs; // 1_771.4…
 * ```
 */
export function serverCap(input: ServerCapInput): ServerCap {
  const until = input.sentAt + input.windowMs;
  const hardAllowance = Math.max(0, input.remaining - input.inFlight);
  const allowance = Math.max(0, hardAllowance - input.reserve);
  const spacingMs = input.spread && allowance > 0 ? Math.max(0, until - input.now) / allowance : 0;
  const cap = { until, allowance, hardAllowance, spacingMs, notBefore: input.lastSendAt + spacingMs };
  if (allowance > 0 || input.lookEveryMs === undefined) return cap;
  return { ...cap, look: { at: Math.min(until, input.sentAt + input.lookEveryMs), everyMs: input.lookEveryMs } };
}

/**
 * The earliest time the cap lets a poll or interactive call go: at once when it has expired, one
 * spacing after the previous send while its allowance lasts, then at the next look or at `until`.
 *
 * @example
 * ```ts
 * capReadyAt(undefined, now); // -Infinity: no cap
 * ```
 */
export function capReadyAt(cap: ServerCap | undefined, now: number): number {
  if (cap === undefined || now >= cap.until) return Number.NEGATIVE_INFINITY;
  return cap.allowance > 0 ? cap.notBefore : (cap.look?.at ?? cap.until);
}

/**
 * The earliest time the cap lets an abort go: at once while the service's count allows one more
 * request (reserve included, no spacing), otherwise at the next look or when the window has reset.
 *
 * ```ts
 * capAbortReadyAt(cap, now) <= capReadyAt(cap, now); // an abort never waits longer than another request
 * ```
 */
export function capAbortReadyAt(cap: ServerCap | undefined, now: number): number {
  if (cap === undefined || now >= cap.until || cap.hardAllowance > 0) return Number.NEGATIVE_INFINITY;
  return cap.look?.at ?? cap.until;
}

/**
 * Until when the cap refuses a start: while the service's count leaves no more than `keptForAborts`,
 * up to `until` (the service's window can have reset by then); `undefined` when a start may go.
 *
 * @example
 * ```ts
 * capStartRefusedUntil(dayCap, now, limits.perDay - limits.startsPerDay); // the day is spent for starts until then
 * ```
 */
export function capStartRefusedUntil(cap: ServerCap | undefined, now: number, keptForAborts: number): number | undefined {
  if (cap === undefined || now >= cap.until || cap.hardAllowance > keptForAborts) return undefined;
  return cap.until;
}

/**
 * The cap after a send at `now`; `undefined` once it has expired. A send at or after the look moves
 * the next look one period on: one request looks per period.
 *
 * @example
 * ```ts
 * cap = capAfterSend(cap, now);
 * ```
 */
export function capAfterSend(cap: ServerCap | undefined, now: number): ServerCap | undefined {
  if (cap === undefined || now >= cap.until) return undefined;
  const spent = { ...cap, allowance: Math.max(0, cap.allowance - 1), hardAllowance: Math.max(0, cap.hardAllowance - 1), notBefore: now + cap.spacingMs };
  return cap.look === undefined || now < cap.look.at ? spent : { ...spent, look: { at: now + cap.look.everyMs, everyMs: cap.look.everyMs } };
}
