import type { Redis } from 'ioredis';
import { Observable } from 'rxjs';
import type { Logger } from '../domain/model.js';
import { InvalidArgumentError, requiredOptions } from '../errors/validation-errors.js';
import type { CheckpointStore, CheckpointStoreEvent, StoredPipeline } from '../pipeline/checkpoint-store.js';
import { CorruptCheckpointError } from '../pipeline/corrupt-checkpoint-error.js';
import { entryOf, type StepCheckpoint } from '../pipeline/pipeline-checkpoint.js';
import { connectRedis, type RedisOption } from './connection.js';

/*
 * A pipeline in Redis, under one hash tag (`{fs:pipeline:<id>}`): `steps` (hash: step → entry as
 * canonical JSON), `fence` (the latest claim) and `cancel` (set once a cancel was asked for). A
 * transition is a Lua script — compare the step's entry and the token, refuse a start once the
 * pipeline is cancelled, write, publish — so two processes can never both move the same step, and a
 * cancel and a start cannot cross. Changes go out on the channel `fs:pipeline:<id>`.
 */

const TRANSITION_SCRIPT = `
if tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[4]) then return 0 end
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then return 0 end
if ARGV[7] == 'starting' and redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
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

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A stored entry, or `CorruptCheckpointError` naming the pipeline and step when it is not one flowstream wrote. */
function parseEntry(pipelineId: string, step: string, text: string): StepCheckpoint {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new CorruptCheckpointError(pipelineId, step, 'not JSON');
  }
  const entry = entryOf(value);
  if (typeof entry === 'string') throw new CorruptCheckpointError(pipelineId, step, entry);
  return entry;
}

/**
 * A message of the pipeline's channel as a `CheckpointStoreEvent`, or `undefined` when it is not one
 * for this pipeline (anyone can publish on a channel: such a message is dropped, not trusted).
 */
export function parseCheckpointMessage(pipelineId: string, text: string): CheckpointStoreEvent | undefined {
  const value = parseJson(text);
  if (!isRecord(value) || value['pipelineId'] !== pipelineId) return undefined;
  if (value['type'] === 'cancel') return { type: 'cancel', pipelineId };
  if (value['type'] !== 'step' || typeof value['step'] !== 'string') return undefined;
  const entry = entryOf(value['entry']);
  return typeof entry === 'string' ? undefined : { type: 'step', pipelineId, step: value['step'], entry };
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
  /** Where a follower's lost connection (once per outage) and messages that are not the store's are told. Default: nowhere. */
  readonly logger?: Logger;
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
  flowstreamTransition(steps: string, fence: string, cancel: string, step: string, expected: string, next: string, token: number, channel: string, event: string, status: string): Promise<number>;
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
  requiredOptions(options, 'must be an object with redis');
  const connection = connectRedis(options.redis);
  const redis = connection.client as Redis & Partial<TransitionCommand>;
  if (redis.flowstreamTransition === undefined) redis.defineCommand('flowstreamTransition', { numberOfKeys: 3, lua: TRANSITION_SCRIPT });
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
        checkpoint: { steps: Object.fromEntries(Object.entries(entries).map(([step, text]) => [step, parseEntry(id, step, text)])) },
        cancelRequested: cancelled !== null,
        fence: Number(token ?? 0),
      };
      return stored;
    },
    transition: async (id, step, expected, next, token) => {
      const { steps, fence, cancel, channel } = keys(id);
      const event: CheckpointStoreEvent = { type: 'step', pipelineId: id, step, entry: next };
      return (await commands.flowstreamTransition(steps, fence, cancel, step, canonical(expected), canonical(next), token, channel, JSON.stringify(event), next.status)) === 1;
    },
    requestCancel: async (id) => {
      const { cancel, channel } = keys(id);
      const event: CheckpointStoreEvent = { type: 'cancel', pipelineId: id };
      // One step: a follower that reads the flag, or hears the message, learns of the same cancel.
      const answers = (await commands.multi().set(cancel, '1').publish(channel, JSON.stringify(event)).exec()) ?? [];
      for (const [error] of answers) if (error !== null) throw error;
    },
    events: (id) =>
      new Observable<CheckpointStoreEvent>((subscriber) => {
        const { cancel, channel } = keys(id);
        // Pub/sub takes a connection of its own. It subscribes again on each connection itself (not
        // ioredis's resubscribe): a cancel published while it was away is then read from its flag.
        const listener = commands.duplicate({ autoResubscribe: false });
        subscribers.add(listener);
        let away = false;
        listener.on('error', (error: Error) => {
          // One line per outage: it fails once per retry until Redis is back.
          if (away) return;
          away = true;
          options.logger?.warn('checkpoint store: lost the connection that follows a pipeline; cancels are read again once it is back', { pipelineId: id, error: error.message });
        });
        listener.on('message', (from: string, text: string) => {
          if (from !== channel) return;
          const event = parseCheckpointMessage(id, text);
          if (event === undefined) options.logger?.warn('checkpoint store: dropped a message that is not a change of this pipeline', { pipelineId: id, channel });
          else subscriber.next(event);
        });
        // 'ready' comes on the first connection and on each reconnection.
        listener.on('ready', () => {
          away = false;
          listener
            .subscribe(channel)
            // Subscribed first, then the flag: a cancel is either in the flag or heard after.
            .then(() => commands.get(cancel))
            .then(
              (cancelled) => {
                if (cancelled !== null && !subscriber.closed) subscriber.next({ type: 'cancel', pipelineId: id });
              },
              (error: unknown) => {
                // Closed by its follower leaving, or dropped meanwhile: then the next 'ready' subscribes and reads again.
                if (subscriber.closed) return;
                options.logger?.warn('checkpoint store: could not follow a pipeline yet; trying again on the next connection', { pipelineId: id, error: error instanceof Error ? error.message : String(error) });
              },
            );
        });
        // A client made with `lazyConnect` waits for a first command that would never come.
        if (listener.status === 'wait') listener.connect().catch(() => undefined);
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
