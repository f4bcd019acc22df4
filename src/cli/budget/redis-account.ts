import type { Redis } from 'ioredis';
import type { AccountRecord } from '../../budget/account-rules.js';
import { FlowstreamError } from '../../errors/flowstream-error.js';
import { checkAccountName, hubStateKeyPattern, ledgerKey } from '../../redis/account-name.js';
import { UsageError } from '../usage-error.js';
import { type RunsByState, runsByState } from './runs-by-state.js';

/** The account's record as Redis holds it, the account's clock at the moment it was read, and the runs its hubs follow. */
export interface AccountReading {
  readonly record: AccountRecord | undefined;
  /** The record's own time plus Redis's time since its last write: the fleet's clock, whatever this machine's says. */
  readonly now: number;
  /** The executions the account's Redis run hubs follow, by status; `null` when they follow none. */
  readonly runs: RunsByState | null;
}

/** Reads a fleet's account in Redis, never writing: the command does not join the account. */
export interface RedisAccountReader {
  read(): Promise<AccountReading>;
  close(): Promise<void>;
}

/** How long one read may wait for Redis before the command says it is unreachable. */
const READ_TIMEOUT_MS = 5_000;

/**
 * The bounds of one refresh's look for the hubs' state keys: keys Redis examines per SCAN, SCAN calls,
 * and state keys read. Past either bound the count says "at least": a refresh stays cheap on a large Redis.
 */
const SCAN_COUNT = 1_000;
const MAX_SCANS = 200;
const MAX_STATE_KEYS = 5_000;

function redisUnavailable(cause: unknown): FlowstreamError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new FlowstreamError(`Redis did not answer the read of the account's record: ${reason}`, 'BUDGET_UNAVAILABLE');
}

/**
 * The executions whose state key matches `match`, counted by the status their hub stored, read without
 * writing: SCAN in batches (a key may come twice), then one pipelined HMGET. A key that expired in
 * between is left out (it holds neither a state, a seq nor a log any more).
 */
async function followedRuns(redis: Redis, match: string): Promise<RunsByState | null> {
  const keys = new Set<string>();
  let cursor = '0';
  let scans = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', match, 'COUNT', SCAN_COUNT);
    cursor = next;
    scans += 1;
    for (const key of found) keys.add(key);
  } while (cursor !== '0' && keys.size < MAX_STATE_KEYS && scans < MAX_SCANS);
  const read = [...keys].slice(0, MAX_STATE_KEYS);
  const pipeline = redis.pipeline();
  for (const key of read) pipeline.hmget(key, 'state', 'seq', 'log');
  const answers = read.length === 0 ? [] : ((await pipeline.exec()) ?? []);
  const states = answers.flatMap(([error, value]) => {
    if (error !== null) throw error;
    const [state, seq, log] = value as [string | null, string | null, string | null];
    return state === null && seq === null && log === null ? [] : [state ?? undefined];
  });
  return runsByState(states, cursor === '0' && read.length === keys.size);
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
  // Loaded with ioredis, not before: the hub's module needs it.
  const key = ledgerKey(name);
  const states = hubStateKeyPattern(name);
  return {
    read: async () => {
      try {
        const runs = await followedRuns(redis, states);
        const answers = await redis.multi().hmget(key, 'r', 't').time().exec();
        const [fields, time] = (answers ?? []).map(([error, value]) => {
          if (error !== null) throw error;
          return value;
        }) as [[string | null, string | null], [string, string]];
        const redisMs = Number(time[0]) * 1_000 + Math.floor(Number(time[1]) / 1_000);
        const [json, writtenAt] = fields;
        if (json === null || json === '') return { record: undefined, now: redisMs, runs };
        const record = JSON.parse(json) as AccountRecord;
        return { record, now: record.at + Math.max(0, redisMs - Number(writtenAt ?? redisMs)), runs };
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
