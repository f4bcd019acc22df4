import { Redis } from 'ioredis';
import { InvalidArgumentError } from '../errors/validation-errors.js';

/**
 * Where Redis is: a URL (`redis://host:6379/0`, `rediss://…`, or `redis+unix:///path/to/redis.sock`),
 * or an ioredis client the caller made and owns.
 *
 * @example
 * ```ts
 * const redis: RedisOption = 'redis://127.0.0.1:6379';
 * ```
 */
export type RedisOption = string | Redis;

/** A connection and whether closing is ours to do (we made it) or the caller's (they passed it). */
export interface RedisConnection {
  readonly client: Redis;
  /** Closes a connection made here; once `giveUp` resolves, without waiting for Redis any longer. */
  close(giveUp?: Promise<void>): Promise<void>;
}

/**
 * Connects to `option`. A client made here retries for ever while Redis is away (commands wait: the
 * budget fails closed) and is closed by `close()`; a client given is left to its owner.
 */
export function connectRedis(option: RedisOption): RedisConnection {
  if (typeof option !== 'string') {
    if (!isRedisClient(option)) throw new InvalidArgumentError('redis', `must be a redis://, rediss:// or redis+unix:// URL, or an ioredis client (got ${describe(option)})`);
    return { client: option, close: () => Promise.resolve() };
  }
  let client: Redis;
  if (option.startsWith('redis+unix://')) {
    client = new Redis({ path: new URL(option).pathname, maxRetriesPerRequest: null });
  } else if (option.startsWith('redis://') || option.startsWith('rediss://')) {
    client = new Redis(option, { maxRetriesPerRequest: null });
  } else {
    throw new InvalidArgumentError('redis', 'must be a redis://, rediss:// or redis+unix:// URL, or an ioredis client');
  }
  // Connection errors show as commands that wait (fail closed), not as unhandled error events.
  client.on('error', () => undefined);
  return {
    client,
    close: (giveUp) =>
      new Promise<void>((resolve) => {
        // QUIT waits behind the commands queued for a Redis not reached, possibly for ever: then the
        // connection is dropped without waiting for them, now or once the client finds Redis gone (it
        // then reconnects). Dropped while reconnecting, ioredis leaves those commands unsettled.
        const drop = (): void => {
          client.off('reconnecting', drop);
          client.disconnect();
          resolve();
        };
        if (client.status !== 'ready') {
          drop();
          return;
        }
        client.once('reconnecting', drop);
        // A Redis that holds the connection open without answering (a frozen process) never answers QUIT.
        void giveUp?.then(drop);
        client.quit().then(() => {
          client.off('reconnecting', drop);
          resolve();
        }, drop);
      }),
  };
}

/**
 * Redis's `maxmemory-policy` (from `INFO memory`), or `undefined` when Redis does not say (a managed
 * Redis that refuses `INFO`, or a server that is not Redis).
 */
export async function evictionPolicy(client: Redis): Promise<string | undefined> {
  try {
    return /^maxmemory_policy:(\S+)/mu.exec(await client.info('memory'))?.[1];
  } catch {
    return undefined;
  }
}

/** An ioredis client, by what the budget uses of it (another copy of ioredis fails `instanceof`). */
function isRedisClient(value: unknown): value is Redis {
  if (typeof value !== 'object' || value === null) return false;
  const client = value as Partial<Record<'defineCommand' | 'duplicate' | 'quit', unknown>>;
  return typeof client.defineCommand === 'function' && typeof client.duplicate === 'function' && typeof client.quit === 'function';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object that is not an ioredis client' : typeof value;
}
