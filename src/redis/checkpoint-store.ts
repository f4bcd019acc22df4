import type { Redis } from 'ioredis';
import { Observable } from 'rxjs';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { CheckpointStore, CheckpointStoreEvent, StoredPipeline } from '../pipeline/checkpoint-store.js';
import type { StepCheckpoint } from '../pipeline/pipeline-checkpoint.js';
import { connectRedis, type RedisOption } from './connection.js';

/*
 * A pipeline in Redis, under one hash tag (`{fs:pipeline:<id>}`): `steps` (hash: step → entry as
 * canonical JSON), `fence` (the latest claim) and `cancel` (set once a cancel was asked for). A
 * transition is a Lua script — compare the step's entry and the token, write, publish — so two
 * processes can never both move the same step. Changes go out on the channel `fs:pipeline:<id>`.
 */

const TRANSITION_SCRIPT = `
if tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[4]) then return 0 end
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
`;

/**
 * The pub/sub channel of a pipeline's changes (each message a `CheckpointStoreEvent` as JSON), for a
 * follower that shares one subscriber connection among many pipelines (flowstream/bullmq's events$).
 */
export function checkpointChannel(pipelineId: string): string {
  return `fs:pipeline:${pipelineId}`;
}

/** One entry as stored: the same fields in the same order whoever wrote it, so equal entries compare equal. */
function canonical(entry: StepCheckpoint | undefined): string {
  if (entry === undefined) return '';
  return JSON.stringify({ status: entry.status, executionId: entry.executionId, attempt: entry.attempt, attemptedAt: entry.attemptedAt });
}

function parseEntry(text: string): StepCheckpoint {
  const raw = JSON.parse(text) as { status: StepCheckpoint['status']; executionId?: string; attempt?: number; attemptedAt?: number };
  return {
    status: raw.status,
    ...(raw.executionId === undefined ? {} : { executionId: raw.executionId }),
    ...(raw.attempt === undefined ? {} : { attempt: raw.attempt }),
    ...(raw.attemptedAt === undefined ? {} : { attemptedAt: raw.attemptedAt }),
  };
}

/**
 * Options of {@link createRedisCheckpointStore}.
 *
 * @example
 * ```ts
 * const options: RedisCheckpointStoreOptions = { redis: 'redis://127.0.0.1:6379' };
 * ```
 */
export interface RedisCheckpointStoreOptions {
  /** A Redis URL, or an ioredis client (left open by `close()`: its owner closes it). */
  readonly redis: RedisOption;
}

/**
 * A {@link CheckpointStore} that closes: its connections are its own.
 *
 * @example
 * ```ts
 * await store.close();
 * ```
 */
export interface RedisCheckpointStore extends CheckpointStore {
  close(): Promise<void>;
}

interface TransitionCommand {
  flowstreamTransition(steps: string, fence: string, step: string, expected: string, next: string, token: number, channel: string, event: string): Promise<number>;
}

/**
 * Pipeline checkpoints in Redis, shared by every process: any worker can
 * resume a pipeline by its id, a step moves by compare-and-set under a fencing token, and a cancel
 * reaches every process following the pipeline.
 *
 * @example
 * ```ts
 * const store = createRedisCheckpointStore({ redis: process.env.REDIS_URL! });
 * runPipeline(client, definition, { checkpoints: { store, pipelineId: 'nightly-2026-11-26' } }).subscribe();
 * // elsewhere: await store.requestCancel('nightly-2026-11-26');
 * ```
 */
export function createRedisCheckpointStore(options: RedisCheckpointStoreOptions): RedisCheckpointStore {
  const connection = connectRedis(options.redis);
  const redis = connection.client as Redis & Partial<TransitionCommand>;
  if (redis.flowstreamTransition === undefined) redis.defineCommand('flowstreamTransition', { numberOfKeys: 2, lua: TRANSITION_SCRIPT });
  const commands = redis as Redis & TransitionCommand;
  const subscribers = new Set<Redis>();
  const keys = (id: string): { steps: string; fence: string; cancel: string; channel: string } => {
    if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('pipelineId', 'must be a non-empty string');
    const tag = `{fs:pipeline:${id}}`;
    return { steps: `${tag}:steps`, fence: `${tag}:fence`, cancel: `${tag}:cancel`, channel: checkpointChannel(id) };
  };
  return {
    claim: async (id) => commands.incr(keys(id).fence),
    load: async (id) => {
      const { steps, fence, cancel } = keys(id);
      const [entries, token, cancelled] = await Promise.all([commands.hgetall(steps), commands.get(fence), commands.get(cancel)]);
      if (Object.keys(entries).length === 0 && token === null && cancelled === null) return undefined;
      const stored: StoredPipeline = {
        checkpoint: { steps: Object.fromEntries(Object.entries(entries).map(([step, text]) => [step, parseEntry(text)])) },
        cancelRequested: cancelled !== null,
        fence: Number(token ?? 0),
      };
      return stored;
    },
    transition: async (id, step, expected, next, token) => {
      const { steps, fence, channel } = keys(id);
      const event: CheckpointStoreEvent = { type: 'step', pipelineId: id, step, entry: next };
      return (await commands.flowstreamTransition(steps, fence, step, canonical(expected), canonical(next), token, channel, JSON.stringify(event))) === 1;
    },
    requestCancel: async (id) => {
      const { cancel, channel } = keys(id);
      await commands.set(cancel, '1');
      const event: CheckpointStoreEvent = { type: 'cancel', pipelineId: id };
      await commands.publish(channel, JSON.stringify(event));
    },
    events: (id) =>
      new Observable<CheckpointStoreEvent>((subscriber) => {
        const { cancel, channel } = keys(id);
        // Pub/sub takes a connection of its own.
        const listener = commands.duplicate();
        subscribers.add(listener);
        listener.on('message', (from: string, text: string) => {
          if (from === channel) subscriber.next(JSON.parse(text) as CheckpointStoreEvent);
        });
        listener
          .subscribe(channel)
          // A cancel asked for before this subscription is not missed.
          .then(() => commands.get(cancel))
          .then((cancelled) => {
            if (cancelled !== null) subscriber.next({ type: 'cancel', pipelineId: id });
          })
          .catch((error: unknown) => {
            subscriber.error(error);
          });
        return () => {
          subscribers.delete(listener);
          listener.disconnect();
        };
      }),
    close: async () => {
      for (const listener of subscribers) listener.disconnect();
      subscribers.clear();
      await connection.close();
    },
  };
}
