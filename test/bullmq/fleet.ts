import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { createPipelineQueue, type PipelineQueue, type PipelineQueueEvent, type PipelineResult } from '../../src/bullmq/index.js';
import { createEmulator, createScaledClock, type Emulator, type WorkflowDefinition } from '../../src/emulator/index.js';
import type { StepCheckpoint } from '../../src/pipeline/pipeline-checkpoint.js';
import { type RunningProcess, scrubbedEnv, startProcess } from '../cli/support/child-process.js';
import { startRedisServer, type RedisServer } from '../redis/redis-server.js';
import { bundleScripts } from '../support/bundled-scripts.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REAL_TIMEOUT_MS = 5_000;
const REAL_LATENCY_SPREAD_MS = 200;

/** How a worker process is set up (worker-process.ts reads these from its environment). */
export interface WorkerSettings {
  readonly name: string;
  readonly concurrency?: number;
  readonly inDoubt?: 'fail' | 'start-again';
  /** Its lease and the stalled check, in real ms: short, so a crashed worker's pipelines are taken over within a second or two. */
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  /** Its client's budget: the account's 100 per minute, or its share of it. */
  readonly requestsPerMinute?: number;
}

/** A pipeline followed from the test process through `queue.events$`, from before it starts. */
export interface FollowedPipeline {
  readonly events: PipelineQueueEvent[];
  /** Resolves with the step's entry once it reached `status`. */
  step(step: string, status: StepCheckpoint['status']): Promise<StepCheckpoint>;
  readonly result: Promise<PipelineResult>;
}

/**
 * A fleet on one machine: a real redis-server, an emulator on a scaled clock that worker processes
 * share, the test's own queue, and worker processes started on demand. `close()` kills what is left.
 */
export interface Fleet {
  readonly server: RedisServer;
  readonly emulator: Emulator;
  readonly queue: PipelineQueue;
  readonly redisUrl: string;
  readonly prefix: string;
  startWorker(settings: WorkerSettings): Promise<RunningProcess>;
  /** Follows a pipeline (listening on Redis before it returns), then starts it with `input` for the `dag` definition. */
  start(pipelineId: string, input: unknown): Promise<FollowedPipeline>;
  /** The highest request number the emulator gave so far: requests after it came later. */
  lastRequest(): number;
  close(): Promise<void>;
}

/** The fleet's process scripts as plain JavaScript: `node <worker>` is a pipeline worker, `node <canceller>` cancels pipelines. */
export interface ProcessScripts {
  readonly worker: string;
  readonly canceller: string;
  /** Removes the bundles. */
  close(): Promise<void>;
}

/**
 * Bundles worker-process.ts and cancel-process.ts once (see bundleScripts), so that each process starts
 * from JavaScript instead of compiling the sources again with `--import tsx`.
 */
export async function bundleProcessScripts(): Promise<ProcessScripts> {
  const { paths, close } = await bundleScripts({ worker: 'test/bullmq/worker-process.ts', canceller: 'test/bullmq/cancel-process.ts' });
  return { ...paths, close };
}

let fleets = 0;

export async function startFleet(options: { readonly scripts: ProcessScripts; readonly speed: number; readonly workflows: readonly WorkflowDefinition[]; readonly rateLimit?: false }): Promise<Fleet> {
  const server = await startRedisServer();
  const clock = createScaledClock(options.speed);
  const emulator = await createEmulator({ clock, workflows: [...options.workflows], ...(options.rateLimit === false ? { rateLimit: false } : {}) });
  fleets += 1;
  const prefix = `fleet${fleets}`;
  const redisUrl = `redis+unix://${server.socket}`;
  const queue = createPipelineQueue({ connection: redisUrl, prefix });
  const workers: RunningProcess[] = [];

  const startWorker = async (settings: WorkerSettings): Promise<RunningProcess> => {
    const worker = startProcess(process.execPath, [options.scripts.worker], {
      cwd: ROOT,
      env: scrubbedEnv({
        REDIS_URL: redisUrl,
        PREFIX: prefix,
        WORKER_NAME: settings.name,
        FLOWSTREAM_API_KEY: emulator.apiKey,
        FLOWSTREAM_BASE_URL: emulator.url,
        EMULATOR_SPEED: String(options.speed),
        EMULATOR_REAL_START: String(clock.realStart),
        CONCURRENCY: String(settings.concurrency ?? 1),
        IN_DOUBT: settings.inDoubt ?? 'fail',
        LOCK_DURATION_MS: String(settings.lockDurationMs ?? 1_000),
        STALLED_INTERVAL_MS: String(settings.stalledIntervalMs ?? 500),
        REQUESTS_PER_MINUTE: String(settings.requestsPerMinute ?? 100),
        // The client lives on emulator time, the machine on real time: a request's 5 real seconds
        // (a busy machine of several processes on 2 cores) and its 200 ms of spread in arrival, scaled.
        TIMEOUT_MS: String(options.speed * REAL_TIMEOUT_MS),
        LATENCY_ALLOWANCE_MS: String(options.speed * REAL_LATENCY_SPREAD_MS),
      }),
    });
    workers.push(worker);
    await worker.waitFor(/^worker ready$/mu, 20_000);
    return worker;
  };

  const start = async (pipelineId: string, input: unknown): Promise<FollowedPipeline> => {
    const events: PipelineQueueEvent[] = [];
    const changed = new Set<() => void>();
    const result = new Promise<PipelineResult>((resolve, reject) => {
      queue.events$(pipelineId).subscribe({
        next: (event) => {
          events.push(event);
          for (const listener of changed) listener();
          if (event.type === 'finished') resolve(event.result);
        },
        error: reject,
      });
    });
    result.catch(() => undefined);
    // From here on, no step's change can pass the follower by.
    await expect.poll(() => server.command('PUBSUB', 'NUMSUB', `fs:pipeline:${prefix}:${pipelineId}`)).toMatch(/:[1-9]\d*\r\n$/u);
    await queue.start('dag', input, { pipelineId });
    const step = (name: string, status: StepCheckpoint['status']): Promise<StepCheckpoint> =>
      new Promise((resolve) => {
        const check = (): void => {
          const found = events.find((event) => event.type === 'step' && event.step === name && event.entry.status === status);
          if (found?.type !== 'step') return;
          changed.delete(check);
          resolve(found.entry);
        };
        changed.add(check);
        check();
      });
    return { events, step, result };
  };

  return {
    server,
    emulator,
    queue,
    redisUrl,
    prefix,
    startWorker,
    start,
    lastRequest: () => Math.max(0, ...emulator.requests.list().map((request) => request.sequence)),
    close: async () => {
      for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exited()));
      await queue.close();
      await emulator.close();
      await server.close();
    },
  };
}

/** A chain of steps as the `dag` definition of worker-process.ts takes it, each step one workflow. */
export function chain(canvasIds: readonly string[], variables: Readonly<Record<string, string>> = {}): { steps: Record<string, { canvasId: string; dependsOn?: string[]; variables: Record<string, string> }> } {
  const names = canvasIds.map((canvasId) => canvasId.replace(/^c-/u, ''));
  return {
    steps: Object.fromEntries(canvasIds.map((canvasId, index) => [names[index]!, { canvasId, ...(index === 0 ? {} : { dependsOn: [names[index - 1]!] }), variables: { ...variables } }])),
  };
}

/** The starts the emulator received for a canvas. */
export function startsOf(emulator: Emulator, canvasId: string): number {
  return emulator.requests.list({ endpoint: 'run', canvasId }).length;
}
