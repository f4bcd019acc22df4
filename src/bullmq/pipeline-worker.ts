/*
 * Design: one BullMQ job per pipeline; its steps are records in the checkpoint store.
 *
 * The DAG stays flowstream's own (BullMQ flows are trees): `runPipeline` decides when a step starts,
 * passes results along, retries a step (`retry`), and records each step in the Redis checkpoint
 * store by compare-and-set under a fencing token — `starting` before its start leaves, `running`
 * with its execution, then its end. So a step is a unit of durable work without being a job of its
 * own: one job per step would need the DAG walked a second time outside runPipeline (which step's
 * job to add when, with whose results), while the work a step does in a worker is only to follow
 * its execution. The job is the lease over the pipeline:
 *
 * - a crashed worker's lock expires (`lockDuration`); BullMQ's stalled check (`stalledInterval`)
 *   hands the job to another worker, whose runPipeline claims the pipeline (a newer token: the old
 *   process can record nothing more), re-attaches to `running` steps with `watch`, and treats a
 *   `starting` step as in doubt (`inDoubt`) — never started twice without being asked to;
 * - `detach()` (SIGTERM) leaves every pipeline without aborting anything and moves its job back to
 *   the queue at once, where another worker resumes it the same way;
 * - a cancel (`queue.cancel`, any process) reaches the worker that runs the pipeline through the
 *   store's pub/sub: every running execution aborted once, nothing started after. A pipeline
 *   cancelled while no worker ran it is ended without starting anything (cancelled-pipeline.ts);
 * - a worker that fails to renew a lock lets go of that pipeline at once; the fencing token covers
 *   the moments before it notices.
 *
 * Every request goes through the `client` given, so through its budget.
 */
import { type Job, type Telemetry, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import { tap } from 'rxjs';
import type { Logger } from '../domain/model.js';
import type { ExecutionsApi } from '../http/calls.js';
import { InvalidArgumentError, positiveInteger } from '../errors/validation-errors.js';
import type { PipelineClient } from '../pipeline/pipeline-client.js';
import type { PipelineDefinition, PipelineOptions } from '../pipeline/pipeline-definition.js';
import { runPipeline } from '../pipeline/run-pipeline.js';
import { createRedisCheckpointStore } from '../redis/checkpoint-store.js';
import { connectRedis, type RedisOption } from '../redis/connection.js';
import { endCancelledPipeline } from './cancelled-pipeline.js';
import { reportJobProgress } from './job-progress-reporter.js';
import { pipelineEnd } from './pipeline-end.js';
import { DEFAULT_PREFIX, PIPELINE_QUEUE_NAME, type PipelineJobData, storedPipelineId } from './pipeline-job.js';
import { initialJobProgress, type PipelineJobProgress } from './pipeline-job-progress.js';
import { pipelineResult, type PipelineResult } from './pipeline-result.js';

/**
 * What a worker needs of a client: runs, file uploads (`transferFiles`) and the abort of a pipeline
 * cancelled while no worker followed it. A whole `Client` fits.
 *
 * @example
 * ```ts
 * const client: PipelineWorkerClient = createClient({ apiKey, baseUrl });
 * ```
 */
export interface PipelineWorkerClient extends PipelineClient {
  readonly executions: Pick<ExecutionsApi, 'abort'>;
}

/**
 * The pipelines a worker can run, by the name `queue.start` gives: a definition, or a function that
 * builds one from the pipeline's input (the JSON given to `start`).
 *
 * @example
 * ```ts
 * const definitions: PipelineDefinitions = {
 *   report: (input: { topic: string }) => ({ steps: { research: { canvasId: 'c-research', input: () => ({ variables: { topic: input.topic } }) } } }),
 * };
 * ```
 */
export type PipelineDefinitions = Readonly<Record<string, PipelineDefinition<string> | ((input: never) => PipelineDefinition<string>)>>;

/**
 * Options of {@link createPipelineWorker}. The lease options are BullMQ's, under their names.
 *
 * @example
 * ```ts
 * const options: PipelineWorkerOptions = { connection: process.env.REDIS_URL!, client, definitions, concurrency: 20 };
 * ```
 */
export interface PipelineWorkerOptions {
  /**
   * A Redis URL (`redis://`, `rediss://`, `redis+unix:///path`), or an ioredis client made with
   * `maxRetriesPerRequest: null` (BullMQ's rule for workers), left open by `close()`.
   */
  readonly connection: RedisOption;
  /** Every request of every pipeline goes through it, so through its budget. */
  readonly client: PipelineWorkerClient;
  readonly definitions: PipelineDefinitions;
  /** How many pipelines this worker follows at once. Default 10. */
  readonly concurrency?: number;
  /** BullMQ's key prefix (default `bull`), as given to the queue. */
  readonly prefix?: string;
  /** Options of every pipeline this worker runs (`onStepFailure`, `inDoubt`, `run`, `scheduler`). */
  readonly pipeline?: Pick<PipelineOptions, 'onStepFailure' | 'inDoubt' | 'run' | 'scheduler'>;
  /** The lease of a pipeline, in ms: a crashed worker's pipelines are taken over once it has run out. Default 30,000. */
  readonly lockDuration?: number;
  /** How often, in ms, workers look for leases run out (once for the whole queue). Default 30,000. */
  readonly stalledInterval?: number;
  /**
   * How many times a pipeline may be taken over from a worker that died before it fails (a job that
   * crashes every worker must stop). Default 5: a pipeline that runs for hours may outlive a few crashes.
   */
  readonly maxStalledCount?: number;
  /** The worker's name, kept on the job of each pipeline it runs (BullMQ's `processedBy`), for dashboards. */
  readonly name?: string;
  /** Where the worker's connection troubles and lost leases are told. Default: nowhere. */
  readonly logger?: Logger;
  /** BullMQ's own tracing (its `telemetry` option, e.g. from `bullmq-otel`): the worker's jobs traced as BullMQ traces them. */
  readonly telemetry?: Telemetry;
}

/**
 * A worker of the pipeline queue.
 *
 * @example
 * ```ts
 * process.once('SIGTERM', () => void worker.detach().then(() => process.exit(0)));
 * ```
 */
export interface PipelineWorker {
  /** Takes no new pipeline, waits for the ones it runs to end, then closes its connections. */
  close(): Promise<void>;
  /**
   * Takes no new pipeline and leaves the ones it runs without aborting anything: each goes back to
   * the queue at once, where another worker resumes it (running steps followed with `watch`). For a
   * graceful shutdown (SIGTERM); resolves once every pipeline is handed back and the connections closed.
   */
  detach(): Promise<void>;
}

const DEFAULTS = { concurrency: 10, lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 5 } as const;

/**
 * Runs the pipelines of the queue (`createPipelineQueue`), `concurrency` at a time, each with
 * `runPipeline` and its checkpoint in Redis: a pipeline whose worker crashed is taken over once its
 * lease runs out, a step is never started twice (a start whose answer was lost is in doubt), a
 * cancel from any process aborts every running execution once, a step's `retry` is honoured, and
 * `detach()` hands every pipeline to another worker without aborting anything. Each pipeline's job
 * reports where its steps stand as its BullMQ progress (a `PipelineJobProgress`: what bull-board and
 * `queue.getJobs()` show). Node-only; needs `bullmq` and `ioredis`.
 *
 * @example
 * ```ts
 * import { createClient, outputText } from 'flowstream';
 * import { createPipelineWorker } from 'flowstream/bullmq';
 *
 * const worker = createPipelineWorker({
 *   connection: process.env.REDIS_URL!,
 *   client: createClient({ apiKey: process.env.FLOWSTREAM_API_KEY!, baseUrl: process.env.FLOWSTREAM_BASE_URL! }),
 *   definitions: {
 *     report: (input: { topic: string }) => ({
 *       steps: {
 *         research: { canvasId: 'c-research', input: () => ({ variables: { topic: input.topic } }), retry: 1 },
 *         summary: { canvasId: 'c-summary', dependsOn: ['research'], input: (r) => ({ variables: { notes: outputText(r.research!) } }) },
 *       },
 *     }),
 *   },
 *   concurrency: 20,
 * });
 * process.once('SIGTERM', () => void worker.detach().then(() => process.exit(0)));
 * ```
 */
export function createPipelineWorker(options: PipelineWorkerOptions): PipelineWorker {
  checkWorkerOptions(options);
  const concurrency = positiveInteger('concurrency', options.concurrency ?? DEFAULTS.concurrency);
  const lockDuration = positiveInteger('lockDuration', options.lockDuration ?? DEFAULTS.lockDuration);
  const stalledInterval = positiveInteger('stalledInterval', options.stalledInterval ?? DEFAULTS.stalledInterval);
  const maxStalledCount = positiveInteger('maxStalledCount', options.maxStalledCount ?? DEFAULTS.maxStalledCount);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const { client, definitions, logger } = options;
  const connection = connectRedis(options.connection);
  const store = createRedisCheckpointStore({ redis: connection.client, ...(logger === undefined ? {} : { logger }) });
  // The pipelines this worker follows, each with the signal that lets go of it.
  const following = new Map<string, AbortController>();
  let detaching = false;

  // Back to the queue, for another worker; when the lease is lost already, the job is someone else's.
  const release = async (job: Job<PipelineJobData, PipelineResult>, token: string | undefined): Promise<never> => {
    await job.moveToWait(token).catch(() => undefined);
    throw new WaitingError();
  };

  const run = async (job: Job<PipelineJobData, PipelineResult, string, PipelineJobProgress>, token: string | undefined): Promise<PipelineResult> => {
    const pipelineId = job.id ?? '';
    const definition = definitionOf(definitions, job.name, job.data.input);
    const storedId = storedPipelineId(prefix, pipelineId);
    const stored = await store.load(storedId);
    if (stored?.cancelRequested === true) return endCancelledPipeline(client.executions, store, storedId, stored, pipelineId, Object.keys(definition.steps));
    if (detaching) return release(job, token);
    const leave = new AbortController();
    following.set(pipelineId, leave);
    const resumed = stored?.checkpoint ?? { steps: {} };
    // The job's progress (bull-board, `queue.getJobs()`): each step's state, execution and nodes.
    const progress = reportJobProgress(job, initialJobProgress(Object.keys(definition.steps), resumed), (error) => {
      logger?.warn('pipeline worker: could not write a pipeline\'s progress', { pipelineId, error: error instanceof Error ? error.message : String(error) });
    });
    try {
      const telemetry = { name: job.name, jobId: pipelineId };
      const pipeline = runPipeline(client, definition, { ...options.pipeline, telemetry, checkpoints: { store, pipelineId: storedId }, detach: leave.signal });
      const end = await pipelineEnd(pipeline.pipe(tap((event) => { progress.event(event); })), resumed);
      // The last progress is written before the job completes: a finished job shows its steps' ends.
      await progress.settled();
      if (end.type === 'detached') return await release(job, token);
      return pipelineResult(pipelineId, end.outcomes, end.checkpoint);
    } finally {
      following.delete(pipelineId);
    }
  };

  const worker = new Worker<PipelineJobData, PipelineResult, string>(PIPELINE_QUEUE_NAME, (job, token) => run(job as Job<PipelineJobData, PipelineResult, string, PipelineJobProgress>, token), {
    connection: connection.client,
    prefix,
    concurrency,
    lockDuration,
    stalledInterval,
    maxStalledCount,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
  });
  worker.on('error', (error) => {
    logger?.warn('pipeline worker: Redis or BullMQ trouble', { error: error.message });
  });
  // A lease that could not be renewed may be another worker's by now: let go of the pipeline (nothing aborted).
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const jobId of jobIds) {
      logger?.warn('pipeline worker: lost the lease of a pipeline, letting go of it', { pipelineId: jobId });
      following.get(jobId)?.abort();
    }
  });

  const shutDown = async (): Promise<void> => {
    await store.close();
    await connection.close();
  };
  return {
    close: async () => {
      await worker.close();
      await shutDown();
    },
    detach: async () => {
      detaching = true;
      // Closing first: no new pipeline is taken while the running ones are handed back.
      const closed = worker.close();
      for (const leave of following.values()) leave.abort();
      await closed;
      await shutDown();
    },
  };
}

/**
 * What a worker cannot do without, checked at its creation: a mistake here would otherwise only show
 * as every pipeline's job failing once a worker takes it.
 */
function checkWorkerOptions(options: PipelineWorkerOptions): void {
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('options', 'must be an object with connection, client and definitions');
  const client: unknown = options.client;
  if (typeof client !== 'object' || client === null || typeof (client as Partial<PipelineWorkerClient>).run !== 'function') throw new InvalidArgumentError('client', 'must be a flowstream client (createClient)');
  const definitions: unknown = options.definitions;
  if (typeof definitions !== 'object' || definitions === null || Array.isArray(definitions)) throw new InvalidArgumentError('definitions', 'must be an object of pipeline definitions by name');
  for (const [name, definition] of Object.entries(definitions)) {
    if (typeof definition !== 'function' && (typeof definition !== 'object' || definition === null)) throw new InvalidArgumentError('definitions', `"${name}" must be a pipeline definition or a function of the input returning one`);
  }
}

/** The definition a job names, built from its input; a job no definition fits fails at once, not retried. */
function definitionOf(definitions: PipelineDefinitions, name: string, input: unknown): PipelineDefinition<string> {
  if (!Object.hasOwn(definitions, name)) throw new UnrecoverableError(`this worker knows no pipeline definition named "${name}"`);
  const source = definitions[name];
  if (source === undefined) throw new UnrecoverableError(`this worker knows no pipeline definition named "${name}"`);
  return typeof source === 'function' ? source(input as never) : source;
}
