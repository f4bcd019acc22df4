import type { RateLimits } from '../state/rate-limiter.js';
import type { Reply } from './reply.js';
import { frameworkError } from './reply.js';

/** service.md §2.1: the account-limit 429, with no Retry-After. */
export function accountLimitReply(window: 'minute' | 'day', limits: RateLimits): Reply {
  const message =
    window === 'minute' ? `Rate limit exceeded: ${limits.perMinute} requests per minute` : `Rate limit exceeded: ${limits.perDay} requests per day`;
  return frameworkError(429, message);
}
