import type { Redis } from 'ioredis';
import type { AccountRecord } from '../../budget/account-rules.js';
import { FlowstreamError } from '../../errors/flowstream-error.js';
import { checkAccountName, ledgerKey } from '../../redis/account-name.js';
import { UsageError } from '../usage-error.js';

/** The account's record as Redis holds it, and the account's clock at the moment it was read. */
export interface AccountReading {
  readonly record: AccountRecord | undefined;
  /** The record's own time plus Redis's time since its last write: the fleet's clock, whatever this machine's says. */
  readonly now: number;
}

/** Reads a fleet's account in Redis, never writing: the command does not join the account. */
export interface RedisAccountReader {
  read(): Promise<AccountReading>;
  close(): Promise<void>;
}

/** How long one read may wait for Redis before the command says it is unreachable. */
const READ_TIMEOUT_MS = 5_000;

function redisUnavailable(cause: unknown): FlowstreamError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new FlowstreamError(`Redis did not answer the read of the account's record: ${reason}`, 'BUDGET_UNAVAILABLE');
}

/**
 * Connects to `url` (`redis://`, `rediss://`, `redis+unix:///path`) to read `account`'s record. ioredis
 * is loaded only here: the command works without it until `--redis` is given.
 */
export async function openRedisAccount(url: string, account: string): Promise<RedisAccountReader> {
  let name: string;
  try {
    name = checkAccountName(account);
  } catch (error) {
    throw new UsageError(`--account: ${(error as Error).message}`);
  }
  if (!/^(?:rediss?|redis\+unix):\/\//u.test(url) || !URL.canParse(url)) throw new UsageError('--redis takes a redis://, rediss:// or redis+unix:///path URL.');
  const { Redis: RedisClient } = await import('ioredis').catch(() => {
    throw new UsageError('--redis needs the ioredis package: npm install ioredis');
  });
  const options = { maxRetriesPerRequest: 1, commandTimeout: READ_TIMEOUT_MS, lazyConnect: true };
  const redis: Redis = url.startsWith('redis+unix://') ? new RedisClient({ ...options, path: new URL(url).pathname }) : new RedisClient(url, options);
  // Connection errors reach the read that meets them, not an unhandled error event.
  redis.on('error', () => undefined);
  const key = ledgerKey(name);
  return {
    read: async () => {
      try {
        const answers = await redis.multi().hmget(key, 'r', 't').time().exec();
        const [fields, time] = (answers ?? []).map(([error, value]) => {
          if (error !== null) throw error;
          return value;
        }) as [[string | null, string | null], [string, string]];
        const redisMs = Number(time[0]) * 1_000 + Math.floor(Number(time[1]) / 1_000);
        const [json, writtenAt] = fields;
        if (json === null || json === '') return { record: undefined, now: redisMs };
        const record = JSON.parse(json) as AccountRecord;
        return { record, now: record.at + Math.max(0, redisMs - Number(writtenAt ?? redisMs)) };
      } catch (error) {
        throw redisUnavailable(error);
      }
    },
    close: async () => {
      await redis.quit().catch(() => {
        redis.disconnect();
      });
    },
  };
}
