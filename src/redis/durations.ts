import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { asyncScheduler, BehaviorSubject, type SchedulerLike, type Subscription, switchMap } from 'rxjs';
import { createDurationModel, DURATION_MODEL_DEFAULTS, type DurationModelOptions, IMPORT_BOUNDS, isDuration, readDurationsJson } from '../budget/duration-model.js';
import type { DurationModel, NodeDurations } from '../domain/durations.js';
import type { Logger } from '../domain/model.js';
import { DEFAULTS } from '../domain/options.js';
import { requiredOptions, timerDelay } from '../errors/validation-errors.js';
import { safeLogger } from '../http/safe-logger.js';
import { accountTag, checkAccountName } from './account-name.js';
import { connectRedis, type RedisOption } from './connection.js';
import { APPEND_DURATIONS_SCRIPT, LOAD_DURATIONS_SCRIPT } from './durations-scripts.js';

/**
 * Options of {@link createRedisDurations}: where the account's durations are, and the bounds of the
 * model (those of `createDurationModel`, kept in Redis too).
 *
 * @example
 * ```ts
 * const options: RedisDurationsOptions = { redis: 'redis://127.0.0.1:6379', account: 'acme-prod', maxNodes: 5_000 };
 * ```
 */
export interface RedisDurationsOptions extends Pick<DurationModelOptions, 'window' | 'maxNodes' | 'minSamples'> {
  /** A Redis URL (`redis://`, `rediss://`, `redis+unix://`), or an ioredis client (its owner closes it). */
  readonly redis: RedisOption;
  /** The account's name in Redis, as given to `createRedisBudget`. Never the API key. */
  readonly account: string;
  /** Told when Redis could not take or give durations; the model goes on learning locally. */
  readonly logger?: Logger;
  /** The scheduler of `unavailableAfterMs` and of the retries. Default real time. */
  readonly scheduler?: SchedulerLike;
  /** How long `ready` waits for an unreachable Redis (ms) before it resolves with the local model alone. Default 30 s. */
  readonly unavailableAfterMs?: number;
}

/**
 * A duration model shared by every process of an account through Redis, with `ready` and `close()`.
 *
 * @example
 * ```ts
 * await durations.ready;
 * durations.estimate('c-1', 'node-write');
 * await durations.close();
 * ```
 */
export interface RedisDurations extends DurationModel {
  /**
   * Resolves once what the account's processes learned is loaded from Redis — or once Redis has been
   * unreachable for `unavailableAfterMs` (the load goes on, and joins the model when it arrives), or
   * on `close()`. It never rejects.
   */
  readonly ready: Promise<void>;
  /** Stops sharing: the subscription and the retries end, a connection made here is closed. The model goes on learning locally only. */
  close(): Promise<void>;
}

/** A node's durations as the fleet tells them: `seq` orders the account's writes (src/redis/durations-scripts.ts). */
interface Learned extends NodeDurations {
  readonly seq?: number;
}

interface DurationCommands {
  flowstreamDurationsAppend(...args: (string | number)[]): Promise<number>;
  flowstreamDurationsLoad(samples: string, used: string, maxNodes: number, window: number): Promise<string[]>;
}

/** How soon a load that failed is tried again. */
const RETRY_MS = 1_000;
/**
 * Writes that may wait for Redis at once: while it is away, a busy process would otherwise queue one
 * per node its runs end for as long as the outage lasts. Beyond it, durations stay local.
 */
const MAX_WRITES_WAITING = 1_000;

/** The hash field of a node: JSON, so no canvas or node id can run into the other. */
function fieldOf(canvasId: string, nodeId: string): string {
  return JSON.stringify([canvasId, nodeId]);
}

/** A canvas or node id as an import may give it (what a writer of an earlier version stored may be longer). */
function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= IMPORT_BOUNDS.idLength;
}

/** A node as the load script gives it, or `undefined` for what no writer of ours stored. */
function storedNode(field: string, text: string): NodeDurations | undefined {
  try {
    const ids: unknown = JSON.parse(field);
    const samplesMs: unknown = JSON.parse(text);
    if (!Array.isArray(ids) || !isId(ids[0]) || !isId(ids[1]) || !Array.isArray(samplesMs)) return undefined;
    return { canvasId: ids[0], nodeId: ids[1], samplesMs: samplesMs.filter(isDuration) };
  } catch {
    return undefined;
  }
}

/** A message of the account's channel, or `undefined` for one that is not a write's. */
function messageOf(text: string): (Learned & { readonly from: string; readonly seq: number }) | undefined {
  try {
    const message = JSON.parse(text) as Record<string, unknown>;
    const { from, seq, canvasId, nodeId, samplesMs } = message;
    if (typeof from !== 'string' || typeof seq !== 'number' || !isId(canvasId) || !isId(nodeId) || !Array.isArray(samplesMs)) return undefined;
    return { from, seq, canvasId, nodeId, samplesMs: samplesMs.filter(isDuration) };
  } catch {
    return undefined;
  }
}

function learn(model: DurationModel, node: NodeDurations): void {
  for (const ms of node.samplesMs) model.record(node.canvasId, node.nodeId, ms);
}

/**
 * Learned node durations shared by every process of an account through Redis. Estimates
 * are read from a local `createDurationModel`, at once and without a round trip; a duration recorded
 * here goes into it at once, then into Redis by one atomic Lua script (the node's last `window`
 * durations; beyond `maxNodes` the least recently written node forgotten) that tells the account's
 * other processes, which add it to theirs. A process starting loads what the account learned
 * (`ready`). Redis unreachable: the model goes on learning locally, nothing throws, the logger is told.
 * `createRedisBudget` makes one for its account (`budget.durations`); make one yourself for a client
 * without a Redis budget.
 *
 * @example
 * ```ts
 * import { createRedisDurations } from 'flowstream/redis';
 * const durations = createRedisDurations({ redis: process.env.REDIS_URL!, account: 'acme-prod' });
 * await durations.ready;
 * const client = createClient({ apiKey, baseUrl, durations });
 * // …
 * await durations.close();
 * ```
 */
export function createRedisDurations(options: RedisDurationsOptions): RedisDurations {
  requiredOptions(options, 'must be an object with redis and account');
  const account = checkAccountName(options.account);
  const window = options.window ?? DURATION_MODEL_DEFAULTS.window;
  const maxNodes = options.maxNodes ?? DURATION_MODEL_DEFAULTS.maxNodes;
  const bounds = { window, maxNodes, minSamples: options.minSamples ?? DURATION_MODEL_DEFAULTS.minSamples };
  // Made first: it checks the bounds before anything connects.
  const models = new BehaviorSubject<DurationModel>(createDurationModel(bounds));
  const unavailableAfterMs = timerDelay('unavailableAfterMs', options.unavailableAfterMs ?? DEFAULTS.timeoutMs);
  const scheduler = options.scheduler ?? asyncScheduler;
  const logger = safeLogger(options.logger);

  const connection = connectRedis(options.redis);
  const redis = connection.client as Redis & Partial<DurationCommands>;
  if (redis.flowstreamDurationsAppend === undefined) {
    redis.defineCommand('flowstreamDurationsAppend', { numberOfKeys: 2, lua: APPEND_DURATIONS_SCRIPT });
    redis.defineCommand('flowstreamDurationsLoad', { numberOfKeys: 2, lua: LOAD_DURATIONS_SCRIPT });
  }
  const commands = redis as Redis & DurationCommands;
  const tag = accountTag(account);
  const samplesKey = `${tag}:durations`;
  const usedKey = `${tag}:durations:used`;
  const channel = `fs:durations:${account}`;
  const instance = randomUUID();
  // Pub/sub takes a connection of its own, which waits for Redis (the load after it is what may fail).
  const subscriber = commands.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  subscriber.on('error', () => undefined);

  let closed = false;
  // Read through a function: TypeScript does not see close() setting it during an await.
  const isClosed = (): boolean => closed;
  let retry: Subscription | undefined;
  /** The latest write the model holds from a load: a message no later is in it already. */
  let loadedSeq = 0;
  /**
   * While a load is on its way: what was learned since it was sent, to add to what it brings. What
   * this process records meanwhile is written after the load, on the same connection: never in it.
   */
  let sinceLoad: Learned[] | undefined;
  let writesWaiting = 0;
  let toldFull = false;

  const warn = (message: string, error: unknown): void => {
    if (closed) return;
    logger?.warn(`flowstream: ${message}`, { account, error: error instanceof Error ? error.message : String(error) });
  };

  let resolveReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    resolveReady = resolve;
  });
  const readyDeadline = scheduler.schedule(() => {
    resolveReady();
  }, unavailableAfterMs);
  const settle = (): void => {
    readyDeadline.unsubscribe();
    resolveReady();
  };

  const remember = (node: Learned): void => {
    if (sinceLoad === undefined) return;
    sinceLoad.push(node);
    // Bounded as the model is: what falls out of this would have fallen out of the model's windows.
    if (sinceLoad.length > maxNodes * window) sinceLoad.shift();
  };

  const write = (node: NodeDurations): void => {
    const samplesMs = node.samplesMs.slice(-window);
    if (closed || samplesMs.length === 0) return;
    if (writesWaiting >= MAX_WRITES_WAITING) {
      if (!toldFull) warn(`${MAX_WRITES_WAITING} duration writes are waiting for Redis: durations are kept locally until it answers`, 'Redis is slow or unreachable');
      toldFull = true;
      return;
    }
    writesWaiting += 1;
    void commands
      .flowstreamDurationsAppend(samplesKey, usedKey, fieldOf(node.canvasId, node.nodeId), node.canvasId, node.nodeId, instance, channel, window, maxNodes, ...samplesMs)
      .then(
        () => {
          toldFull = false;
        },
        (error: unknown) => {
          warn('could not share node durations through Redis (kept locally)', error);
        },
      )
      .finally(() => {
        writesWaiting -= 1;
      });
  };

  /** The model anew from what the account stored, plus what was learned since the load was sent. */
  const adopt = (reply: readonly string[]): void => {
    const [latest, ...pairs] = reply;
    const seq = Number(latest ?? 0);
    const fresh = createDurationModel(bounds);
    for (let index = 0; index + 1 < pairs.length; index += 2) {
      const node = storedNode(pairs[index] ?? '', pairs[index + 1] ?? '');
      if (node !== undefined) learn(fresh, node);
    }
    for (const node of sinceLoad ?? []) if (node.seq === undefined || node.seq > seq) learn(fresh, node);
    sinceLoad = undefined;
    loadedSeq = Math.max(loadedSeq, seq);
    models.next(fresh);
  };

  const load = async (): Promise<void> => {
    try {
      // Subscribed before loading: a write the load misses is one whose message comes.
      await subscriber.subscribe(channel);
      if (isClosed()) return;
      sinceLoad = [];
      const reply = await commands.flowstreamDurationsLoad(samplesKey, usedKey, maxNodes, window);
      if (isClosed()) return;
      adopt(reply);
      settle();
    } catch (error) {
      sinceLoad = undefined;
      if (isClosed()) return;
      warn('could not load the account\'s node durations from Redis (retrying)', error);
      retry = scheduler.schedule(() => {
        retry = undefined;
        void load();
      }, RETRY_MS);
    }
  };

  subscriber.on('message', (from: string, text: string) => {
    if (from !== channel) return;
    const message = messageOf(text);
    // Our own writes are in the model already; a write no later than the load is in what it brought.
    if (message === undefined || message.from === instance || message.seq <= loadedSeq) return;
    learn(models.value, message);
    remember(message);
  });
  void load();

  return {
    estimate: (canvasId, nodeId) => models.value.estimate(canvasId, nodeId),
    record(canvasId, nodeId, durationMs) {
      models.value.record(canvasId, nodeId, durationMs);
      if (!isDuration(durationMs)) return;
      const node: NodeDurations = { canvasId, nodeId, samplesMs: [durationMs] };
      remember(node);
      write(node);
    },
    toJSON: () => models.value.toJSON(),
    import(json) {
      // Checked and copied once (InvalidArgumentError): only an exported model's plain values reach
      // Redis, and of its nodes only those the model keeps.
      const nodes = readDurationsJson(json);
      models.value.import({ version: 1, nodes });
      for (const node of nodes.slice(-maxNodes)) {
        remember(node);
        write(node);
      }
    },
    snapshot: () => models.value.snapshot(),
    state$: models.pipe(switchMap((model) => model.state$)),
    ready,
    async close() {
      if (closed) return;
      closed = true;
      retry?.unsubscribe();
      settle();
      subscriber.disconnect();
      await connection.close();
    },
  };
}
