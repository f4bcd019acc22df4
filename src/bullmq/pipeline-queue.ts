import { randomUUID } from 'node:crypto';
import { Queue, type Telemetry } from 'bullmq';
import { Observable, type Subscriber } from 'rxjs';
import type { Logger } from '../domain/model.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { InvalidArgumentError, objectArgument, shownType } from '../errors/validation-errors.js';
import { createRedisCheckpointStore } from '../redis/checkpoint-store.js';
import { connectRedis, type RedisOption } from '../redis/connection.js';
import { pipelineChannels } from './pipeline-channels.js';
import { pipelineEndings } from './pipeline-endings.js';
import { checkPipelineId, DEFAULT_PREFIX, PIPELINE_QUEUE_NAME, type PipelineJobData, storedPipelineId } from './pipeline-job.js';
import { pipelineQueueEvents, type PipelineQueueEvent } from './pipeline-queue-events.js';
import type { PipelineResult } from './pipeline-result.js';

/**
 * Options of {@link createPipelineQueue}.
 *
 * @example
 * ```ts
 * const options: PipelineQueueOptions = { connection: process.env.REDIS_URL!, prefix: 'staging' };
 * ```
 */
export interface PipelineQueueOptions {
  /**
   * A Redis URL (`redis://`, `rediss://`, `redis+unix:///path`), or an ioredis client made with
   * `maxRetriesPerRequest: null` (BullMQ's rule), left open by `close()`.
   */
  readonly connection: RedisOption;
  /** BullMQ's key prefix (default `bull`); queue and workers must agree. Pipelines of another prefix are another world. */
  readonly prefix?: string;
  /** Where messages on a pipeline's channel that are not its changes, and connection troubles, are told. Default: nowhere. */
  readonly logger?: Logger;
  /** BullMQ's own tracing (its `telemetry` option, e.g. from `bullmq-otel`): a pipeline's job traced from its `start`. */
  readonly telemetry?: Telemetry;
}

/**
 * Options of {@link PipelineQueue.start}.
 *
 * @example
 * ```ts
 * await queue.start('nightly-report', { day: '2026-11-26' }, { pipelineId: 'nightly-2026-11-26' });
 * ```
 */
export interface StartPipelineOptions {
  /**
   * The pipeline's id (the BullMQ job id; no `:`, not a whole number). Default: a random UUID.
   * Starting an id again does nothing: the first start stands, even once it has finished.
   */
  readonly pipelineId?: string;
}

/**
 * Where pipelines are started, cancelled and followed, from any process; workers run them.
 *
 * @example
 * ```ts
 * const id = await queue.start('report', { topic: 'tides' });
 * queue.events$(id).subscribe((event) => console.log(event));
 * ```
 */
export interface PipelineQueue {
  /** Queues a pipeline of the definition named so (as the workers know it), built from `input` (JSON); resolves with its id. */
  start(definitionName: string, input?: unknown, options?: StartPipelineOptions): Promise<string>;
  /**
   * Cancels a pipeline from any process: the worker that runs it aborts every running execution
   * once and starts nothing more; a pipeline no worker runs yet is never started.
   */
  cancel(pipelineId: string): Promise<void>;
  /** The pipeline's progress, from whichever worker runs it: where its steps stand, each change, then `finished`. */
  events$(pipelineId: string): Observable<PipelineQueueEvent>;
  /**
   * Closes the queue's connections (a connection given as a client stays open). Its followers
   * (`events$`) error, and every call after it rejects, with a `FlowstreamError` coded `QUEUE_CLOSED`.
   * Closing again does nothing more.
   */
  close(): Promise<void>;
}

/**
 * A queue of pipelines on BullMQ: `start` adds one job per pipeline (its id
 * the job id, so a pipeline is never queued twice), workers from `createPipelineWorker` run it, and
 * `events$` follows it from any process. Node-only; needs `bullmq` and `ioredis`.
 *
 * @example
 * ```ts
 * import { createPipelineQueue } from 'flowstream/bullmq';
 *
 * const queue = createPipelineQueue({ connection: 'redis://127.0.0.1:6379' });
 * const pipelineId = await queue.start('report', { topic: 'tides' });
 * queue.events$(pipelineId).subscribe((event) => {
 *   if (event.type === 'step') console.log(`${event.step}: ${event.entry.status}`);
 *   if (event.type === 'finished') console.log(event.result.status);
 * });
 * // from any process: await queue.cancel(pipelineId);
 * ```
 */
export function createPipelineQueue(options: PipelineQueueOptions): PipelineQueue {
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('options', 'must be an object with the connection');
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const connection = connectRedis(options.connection);
  const queue = new Queue<PipelineJobData, PipelineResult>(PIPELINE_QUEUE_NAME, { connection: connection.client, prefix, ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }) });
  // Its connection reconnects by itself; a call made meanwhile waits, or fails to its caller.
  queue.on('error', () => undefined);
  const { logger } = options;
  const store = createRedisCheckpointStore({ redis: connection.client, ...(logger === undefined ? {} : { logger }) });
  const endings = pipelineEndings(queue, connection.client, prefix);
  const channels = pipelineChannels(connection.client, logger);
  // Once closing, its connections are going or gone: calls are refused by name, not by ioredis.
  let closing: Promise<void> | undefined;
  const followers = new Set<Subscriber<PipelineQueueEvent>>();
  const refuseClosed = (): void => {
    if (closing !== undefined) throw queueClosedError();
  };
  return {
    start: async (definitionName, input, startOptions) => {
      refuseClosed();
      const given: unknown = definitionName;
      if (typeof given !== 'string' || given === '') throw new InvalidArgumentError('definitionName', `must be the non-empty name of a definition (got ${given === '' ? 'an empty string' : shownType(given)})`);
      const pipelineId = checkPipelineId(objectArgument('options', startOptions).pipelineId ?? randomUUID());
      checkJsonInput(input);
      // BullMQ adds nothing when a job of this id exists: the pipeline runs once.
      await queue.add(definitionName, { input }, { jobId: pipelineId });
      return pipelineId;
    },
    cancel: async (pipelineId) => {
      refuseClosed();
      await store.requestCancel(storedPipelineId(prefix, checkPipelineId(pipelineId)));
    },
    events$: (pipelineId) => {
      const events$ = pipelineQueueEvents(channels, store, endings, storedPipelineId(prefix, checkPipelineId(pipelineId)), pipelineId, logger);
      return new Observable<PipelineQueueEvent>((subscriber) => {
        if (closing !== undefined) {
          subscriber.error(queueClosedError());
          return undefined;
        }
        followers.add(subscriber);
        const following = events$.subscribe(subscriber);
        return () => {
          followers.delete(subscriber);
          following.unsubscribe();
        };
      });
    },
    close: () => {
      closing ??= (async () => {
        // A follower would otherwise wait for an end it can no longer hear.
        for (const follower of [...followers]) follower.error(queueClosedError());
        channels.close();
        await endings.close();
        await queue.close();
        await store.close();
        await connection.close();
      })();
      return closing;
    },
  };
}

/** What a queue's calls and followers get once it is closed. */
function queueClosedError(): FlowstreamError {
  return new FlowstreamError('The pipeline queue is closed', 'QUEUE_CLOSED');
}

/** The input travels as JSON in the job: what JSON cannot hold (a BigInt, a cycle) is refused at the call, naming `input`. */
function checkJsonInput(input: unknown): void {
  try {
    JSON.stringify(input);
  } catch (error) {
    throw new InvalidArgumentError('input', `must be JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}
