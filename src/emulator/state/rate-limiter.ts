/** Limits of the account budget. */
export interface RateLimits {
  readonly perMinute: number;
  readonly perDay: number;
}

/** The verdict on one request, with the headers every answer past auth carries (service.md §2.1). */
export interface RateDecision {
  readonly allowed: boolean;
  /** The window that refused the request. */
  readonly exceeded: 'minute' | 'day' | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

interface Window {
  start: number;
  count: number;
}

/**
 * service.md §2.1: one counter per account shared by every endpoint, in fixed windows that start at
 * the first request; rejected requests still count.
 */
export class RateLimiter {
  readonly #limits: RateLimits;
  #minute: Window | undefined;
  #day: Window | undefined;

  constructor(limits: RateLimits) {
    this.#limits = limits;
  }

  take(now: number): RateDecision {
    this.#minute = count(this.#minute, now, MINUTE_MS);
    this.#day = count(this.#day, now, DAY_MS);
    const exceeded = this.#minute.count > this.#limits.perMinute ? 'minute' : this.#day.count > this.#limits.perDay ? 'day' : undefined;
    const headers = {
      'X-RateLimit-Limit-RPM': String(this.#limits.perMinute),
      'X-RateLimit-Remaining-RPM': String(Math.max(0, this.#limits.perMinute - this.#minute.count)),
      'X-RateLimit-Limit-Daily': String(this.#limits.perDay),
      'X-RateLimit-Remaining-Daily': String(Math.max(0, this.#limits.perDay - this.#day.count)),
    };
    return { allowed: exceeded === undefined, exceeded, headers };
  }

  /** Headers of an exhausted budget, for injected account-limit 429s. */
  exhaustedHeaders(): Readonly<Record<string, string>> {
    return {
      'X-RateLimit-Limit-RPM': String(this.#limits.perMinute),
      'X-RateLimit-Remaining-RPM': '0',
      'X-RateLimit-Limit-Daily': String(this.#limits.perDay),
      'X-RateLimit-Remaining-Daily': String(Math.max(0, this.#limits.perDay - (this.#day?.count ?? 0))),
    };
  }

  get limits(): RateLimits {
    return this.#limits;
  }
}

function count(window: Window | undefined, now: number, length: number): Window {
  if (window === undefined || now >= window.start + length) return { start: now, count: 1 };
  return { start: window.start, count: window.count + 1 };
}
