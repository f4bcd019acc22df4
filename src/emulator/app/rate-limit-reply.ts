import type { RateLimits } from '../state/rate-limiter.js';
import type { Reply } from './reply.js';
import { frameworkError } from './reply.js';

/** service.md §2.1: the account-limit 429, with no Retry-After; the minute's and the day's texts differ. */
export function accountLimitReply(window: 'minute' | 'day', limits: RateLimits): Reply {
  const message =
    window === 'minute' ? `Rate limit exceeded: ${String(limits.perMinute)} requests per minute` : `Daily rate limit exceeded: ${String(limits.perDay)} requests per day`;
  return frameworkError(429, message);
}
