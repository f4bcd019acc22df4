import { describe, expect, it } from 'vitest';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import { createRedisRunHub, type RedisRunHubOptions } from '../../src/redis/index.js';

/** No server listens here: each option is refused before any connection is made. */
const REDIS = 'redis://127.0.0.1:1';

describe('createRedisRunHub options', () => {
  it.each<[string, unknown]>([
    ['options', undefined],
    ['account', { redis: REDIS, account: 'has spaces' }],
    ['account', { redis: REDIS, account: 'prod-rf_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF' }],
    ['leaseMs', { redis: REDIS, account: 'acme', leaseMs: 0 }],
    ['leaseMs', { redis: REDIS, account: 'acme', leaseMs: Number.NaN }],
    ['maxLen', { redis: REDIS, account: 'acme', maxLen: 1.5 }],
    ['maxLen', { redis: REDIS, account: 'acme', maxLen: 0 }],
    ['keepMs', { redis: REDIS, account: 'acme', keepMs: -1 }],
    ['redis', { redis: 'http://127.0.0.1:1', account: 'acme' }],
  ])('refuses a bad %s with InvalidArgumentError, never quoting the account', (name, options) => {
    let thrown: unknown;
    try {
      createRedisRunHub(options as RedisRunHubOptions);
    } catch (error) {
      thrown = error;
    }
    expect(isInvalidArgumentError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ message: expect.stringContaining(name) as unknown });
    expect((thrown as Error).message).not.toContain('aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF');
  });
});
