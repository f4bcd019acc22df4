/** service.md §2.1: the per-IP throttler in front of the service allows about 50 requests a second per route. */
export const THROTTLER_LIMIT = 50;
const THROTTLER_WINDOW_MS = 1_000;

interface Window {
  readonly start: number;
  count: number;
}

/**
 * The per-IP throttler's counters (service.md §2.1): one fixed window per route from its first
 * request, shared by every caller (they are all on loopback). It only counts: its unsuffixed
 * `X-RateLimit-*` headers go on every answer, while its refusal is left to the `rate-limit` fault
 * (`variant: 'throttler'`), so that a test decides when a caller meets it.
 */
export class IpThrottler {
  readonly #windows = new Map<string, Window>();

  /** Counts one request to `route` at `now`; returns the headers the throttler puts on its answer. */
  take(route: string, now: number): Readonly<Record<string, string>> {
    const current = this.#windows.get(route);
    const window = current === undefined || now >= current.start + THROTTLER_WINDOW_MS ? { start: now, count: 0 } : current;
    window.count += 1;
    this.#windows.set(route, window);
    return {
      'X-RateLimit-Limit': String(THROTTLER_LIMIT),
      'X-RateLimit-Remaining': String(Math.max(0, THROTTLER_LIMIT - window.count)),
      // Seconds until the window resets, rounded up.
      'X-RateLimit-Reset': String(Math.ceil((window.start + THROTTLER_WINDOW_MS - now) / 1_000)),
    };
  }
}
