import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { asyncScheduler, interval, type SchedulerLike, type Subscription, timer } from 'rxjs';
import type { Logger } from '../domain/model.js';
import { InvalidArgumentError, timerDelay } from '../errors/validation-errors.js';
import { type IdempotencyClaim, idempotencyKey, type IdempotencyStore, idempotencyTtlMs } from '../runs/idempotency.js';
import { checkAccountName, idempotencyEpochKey, idempotencyKeyName } from './account-name.js';
import { safeLogger } from '../http/safe-logger.js';
import { connectRedis, evictionPolicy, type RedisOption } from './connection.js';

/*
 * One hash per key (`{fs:<account>}:idempotency:<key>`): `token` (the claim's fencing token),
 * `claimedAt`, `expiresAt`, `leaseUntil` (while its start has not answered, renewed by its owner; on
 * the scheduler's clock, which every process of the account shares), then `executionId` once recorded
 * or `abandoned` once in doubt. Each move is a Lua script, so that two processes never both claim a
 * key, and an owner that lost its claim (expired, claimed again) can no longer write it.
 */

/**
 * Claims a key by the rule of `decideClaim` (runs/idempotency.ts), which this mirrors: a start
 * on its way with a live lease is waited on (`{'wait'}`), an expired claim is free, a recorded one
 * followed, an abandoned one or one whose lease ran out is in doubt. Answers with the account's epoch mark
 * (made here when absent): another one than a process saw before means Redis lost the keys.
 * KEYS: the key's hash, the epoch mark. ARGV: token, now, expiresAt, leaseUntil, keepMs (Redis's own
 * expiry, to collect it), a new epoch mark.
 */
const CLAIM_SCRIPT = `
local epoch = redis.call('GET', KEYS[2])
if not epoch then
  epoch = ARGV[6]
  redis.call('SET', KEYS[2], epoch)
end
local now = tonumber(ARGV[2])
local c = redis.call('HMGET', KEYS[1], 'token', 'claimedAt', 'expiresAt', 'leaseUntil', 'executionId', 'abandoned')
if c[1] then
  if (not c[5]) and c[6] ~= '1' and tonumber(c[4]) > now then return {'wait', '', epoch} end
  if tonumber(c[3]) > now then
    if c[5] then return {'follow', c[5], epoch} end
    return {'in-doubt', c[2], epoch}
  end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'claimedAt', ARGV[2], 'expiresAt', ARGV[3], 'leaseUntil', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {'start', '', epoch}
`;

/**
 * Settles or renews a claim still held by `token` (not recorded, not abandoned): `record` its
 * execution, `release` the key, `abandon` it in doubt, or `renew` its lease. 1 when done, 0 when the
 * claim is no longer the caller's.
 * KEYS: the key's hash. ARGV: token, action, value (execution id; new leaseUntil), keepMs (renew: Redis's expiry at least).
 */
const SETTLE_SCRIPT = `
local c = redis.call('HMGET', KEYS[1], 'token', 'executionId', 'abandoned')
if c[1] ~= ARGV[1] or c[2] or c[3] == '1' then return 0 end
if ARGV[2] == 'record' then redis.call('HSET', KEYS[1], 'executionId', ARGV[3])
elseif ARGV[2] == 'release' then redis.call('DEL', KEYS[1])
elseif ARGV[2] == 'abandon' then redis.call('HSET', KEYS[1], 'abandoned', '1')
else
  redis.call('HSET', KEYS[1], 'leaseUntil', ARGV[3])
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
end
return 1
`;

interface IdempotencyCommands {
  flowstreamIdempotencyClaim(key: string, epochKey: string, token: string, now: number, expiresAt: number, leaseUntil: number, keepMs: number, epoch: string): Promise<string[]>;
  flowstreamIdempotencySettle(key: string, token: string, action: 'record' | 'release' | 'abandon' | 'renew', value: string, keepMs: number): Promise<number>;
}

/**
 * Options of {@link createRedisIdempotencyStore}.
 *
 * @example
 * ```ts
 * const options: RedisIdempotencyStoreOptions = { redis: 'redis://127.0.0.1:6379', account: 'acme-prod' };
 * ```
 */
export interface RedisIdempotencyStoreOptions {
  /** A Redis URL, or an ioredis client (left open by `close()`: its owner closes it). */
  readonly redis: RedisOption;
  /** The account's name (never its API key): keys of two accounts never meet. */
  readonly account: string;
  /**
   * How long a claim whose start has not answered stays the owner's without a renewal (renewed three
   * times per lease while the owner lives). A process that dies between sending a start and recording
   * its answer leaves the key in doubt once this has passed; until then other callers wait. Default 10 s.
   */
  readonly leaseMs?: number;
  /** How often a caller waiting on another's start looks again, and an owner that could not reach Redis to record its start tries again. Default 200 ms. */
  readonly pollMs?: number;
  /** The client's scheduler: the keys' and leases' clock and timers (every process of the account on the same clock). Default real time. */
  readonly scheduler?: SchedulerLike;
  /**
   * Where a lease that could not be renewed, or a key that could not be recorded or released, is told;
   * and that Redis lost the account's keys, or that its `maxmemory-policy` may evict them. Default: nowhere.
   */
  readonly logger?: Logger;
}

/**
 * An {@link IdempotencyStore} that closes: its connection is its own.
 *
 * @example
 * ```ts
 * await store.close();
 * ```
 */
export interface RedisIdempotencyStore extends IdempotencyStore {
  /** Stops renewing leases (a start still on its way here leaves its key in doubt once its lease ran out) and closes the connection made here. */
  close(): Promise<void>;
}

const DEFAULTS = { leaseMs: 10_000, pollMs: 200 } as const;

/** Lease renewals per lease. */
const RENEWALS_PER_LEASE = 3;

/**
 * Idempotency keys in Redis, shared by every process of an account (`RunOptions.idempotencyKey`):
 * the same key, from any process, follows the one execution started with it. The owner of a claim
 * holds a lease on it while its start is on its way; another process's run with the key waits for
 * the answer, and errors with `StartInDoubtError` when the owner died first (its lease ran out).
 * Keys are as durable as Redis: give it persistence (`appendonly yes`) and `maxmemory-policy noeviction`.
 * A Redis that lost them (restarted with nothing saved, flushed, evicting) forgets every claim — a run
 * with a key claimed before then starts again — and the `logger` is told.
 *
 * @example
 * ```ts
 * import { createRedisIdempotencyStore } from 'flowstream/redis';
 * const idempotency = createRedisIdempotencyStore({ redis: process.env.REDIS_URL!, account: 'acme-prod' });
 * const client = createClient({ apiKey, baseUrl, idempotency });
 * client.run('c-invoice', { variables }, { idempotencyKey: `invoice-${invoiceId}` }).subscribe();
 * ```
 */
export function createRedisIdempotencyStore(options: RedisIdempotencyStoreOptions): RedisIdempotencyStore {
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('options', 'must be an object');
  const account = checkAccountName(options.account);
  const leaseMs = timerDelay('leaseMs', options.leaseMs ?? DEFAULTS.leaseMs);
  const pollMs = timerDelay('pollMs', options.pollMs ?? DEFAULTS.pollMs);
  const scheduler = options.scheduler ?? asyncScheduler;
  const connection = connectRedis(options.redis);
  const redis = connection.client as Redis & Partial<IdempotencyCommands>;
  if (redis.flowstreamIdempotencyClaim === undefined) {
    redis.defineCommand('flowstreamIdempotencyClaim', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
    redis.defineCommand('flowstreamIdempotencySettle', { numberOfKeys: 1, lua: SETTLE_SCRIPT });
  }
  const commands = redis as Redis & IdempotencyCommands;
  const epochKey = idempotencyEpochKey(account);
  // A logger that throws must not fail a claim Redis has already taken (its lease would never be renewed).
  const logger = safeLogger(options.logger);

  /*
   * Keys are only as durable as Redis: one that lost them (restarted with nothing saved, flushed, failed
   * over to a replica that had not received them, or evicting them under memory pressure) forgets every
   * claim, and a run with a key claimed before starts its execution again. That cannot be made safe
   * here, so it is said: once when Redis's eviction policy may drop keys, and whenever the account's
   * epoch mark changed under this process.
   */
  let policyChecked: Promise<void> | undefined;
  /** Once, before the first claim: one round trip. */
  const checkPolicy = (): Promise<void> =>
    (policyChecked ??= evictionPolicy(redis).then((policy) => {
      // evictionPolicy never rejects, and the logger never throws: one check for the store's life.
      if (policy !== undefined && policy !== 'noeviction') logger?.warn(`flowstream: Redis's maxmemory-policy is ${policy}: under memory pressure it may evict idempotency keys, and a run with an evicted key starts its execution again. Set it to noeviction.`, { policy });
    }));
  let knownEpoch: string | undefined;
  const sawEpoch = (epoch: string): void => {
    if (knownEpoch !== undefined && epoch !== knownEpoch) logger?.warn('flowstream: Redis lost the idempotency keys of this account (restarted with nothing saved, flushed, or evicted): a run with a key claimed before this may start its execution again', { account });
    knownEpoch = epoch;
  };

  // The claims held here whose starts have not answered (hash → token, and the end of the lease Redis last
  // confirmed): their leases are renewed on one timer.
  const held = new Map<string, { readonly token: string; leaseUntil: number }>();
  let renewing: Subscription | undefined;
  const renew = (): void => {
    const leaseUntil = scheduler.now() + leaseMs;
    for (const [name, claim] of held) {
      commands.flowstreamIdempotencySettle(name, claim.token, 'renew', String(leaseUntil), 2 * leaseMs).then(
        (done) => {
          if (done === 0) letGo(name, claim.token);
          else if (held.get(name) === claim) claim.leaseUntil = Math.max(claim.leaseUntil, leaseUntil);
        },
        (error: unknown) => {
          logger?.warn('flowstream: could not renew the lease of an idempotency key; trying again', { error: error instanceof Error ? error.message : String(error) });
        },
      );
    }
  };
  const hold = (name: string, token: string, leaseUntil: number): void => {
    held.set(name, { token, leaseUntil });
    renewing ??= interval(leaseMs / RENEWALS_PER_LEASE, scheduler).subscribe(renew);
  };
  const letGo = (name: string, token: string): void => {
    if (held.get(name)?.token === token) held.delete(name);
    if (held.size > 0) return;
    renewing?.unsubscribe();
    renewing = undefined;
  };
  // The waits between a settle's attempts, ended by close().
  const retrying = new Set<() => void>();
  /** Waits `pollMs` on the scheduler; false when the store closed first. */
  const retryPause = (): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      const end = (goOn: boolean): void => {
        retrying.delete(stop);
        waiting.unsubscribe();
        resolve(goOn);
      };
      const stop = (): void => { end(false); };
      const waiting = timer(pollMs, scheduler).subscribe(() => { end(true); });
      retrying.add(stop);
    });
  /**
   * Records, releases or abandons a claim held here. Redis out of reach is tried again every `pollMs`
   * while the claim's lease (still renewed meanwhile) holds: given up, a key whose execution is known
   * would stay in doubt for its whole TTL. Once the lease may have run out, others may have found the
   * key in doubt already, so the settle is given up and told.
   */
  const settle = async (key: string, token: string, action: 'record' | 'release' | 'abandon', value = ''): Promise<void> => {
    const name = idempotencyKeyName(account, idempotencyKey(key));
    // Bounded even while Redis renews the lease but refuses the settle: one lease from the first attempt.
    const until = scheduler.now() + leaseMs;
    try {
      for (;;) {
        try {
          await commands.flowstreamIdempotencySettle(name, token, action, value, 0);
          return;
        } catch (error) {
          const claim = held.get(name);
          const renewable = claim?.token === token && scheduler.now() < Math.min(claim.leaseUntil, until);
          if (!renewable || !(await retryPause())) {
            logger?.warn(`flowstream: could not ${action} an idempotency key in Redis; giving up`, { key, error: error instanceof Error ? error.message : String(error) });
            throw error;
          }
        }
      }
    } finally {
      // Settled, or given up: either way the lease is not renewed any more (a key not recorded falls in doubt).
      letGo(name, token);
    }
  };
  /** Waits `pollMs` on the scheduler, or rejects when `signal` aborts first. */
  const pause = (signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        waiting.unsubscribe();
        reject(signal?.reason as Error);
      };
      const waiting = timer(pollMs, scheduler).subscribe(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  return {
    claim: async (key, ttlMs, claimOptions = {}): Promise<IdempotencyClaim> => {
      const name = idempotencyKeyName(account, idempotencyKey(key));
      idempotencyTtlMs(ttlMs);
      if (logger !== undefined) await checkPolicy();
      const { signal } = claimOptions;
      for (;;) {
        signal?.throwIfAborted();
        // Random: a claim taken over (expired, claimed again) can no longer be written by its old owner, whatever its process.
        const token = randomUUID();
        const now = scheduler.now();
        const [kind, value = '', epoch = ''] = await commands.flowstreamIdempotencyClaim(name, epochKey, token, now, now + ttlMs, now + leaseMs, ttlMs + 2 * leaseMs, randomUUID());
        sawEpoch(epoch);
        switch (kind) {
          case 'start':
            hold(name, token, now + leaseMs);
            return { kind: 'start', token };
          case 'follow':
            return { kind: 'follow', executionId: value };
          case 'in-doubt':
            return { kind: 'in-doubt', claimedAt: Number(value) };
          case 'wait':
            await pause(signal);
            break;
          case undefined:
          default:
            throw new Error(`flowstream: unexpected answer of the idempotency claim script: ${String(kind)}`);
        }
      }
    },
    record: (key, token, executionId) => settle(key, token, 'record', executionId),
    release: (key, token) => settle(key, token, 'release'),
    abandon: (key, token) => settle(key, token, 'abandon'),
    close: async () => {
      for (const stop of [...retrying]) stop();
      renewing?.unsubscribe();
      renewing = undefined;
      held.clear();
      await connection.close();
    },
  };
}
