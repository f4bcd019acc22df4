/**
 * A pipeline worker in a process of its own, as a service runs one: bundled and started by fleet.ts
 * (or `node --import tsx test/bullmq/worker-process.ts`), configured by its environment (fleet.ts sets
 * it). Its client lives on the test emulator's clock (same speed, same real start). It knows one definition, `dag`: the
 * pipeline's steps as JSON, each with its variables. SIGTERM detaches: every pipeline goes back to
 * the queue, nothing aborted.
 */
import { createPipelineWorker } from '../../src/bullmq/index.js';
import { createClient } from '../../src/client.js';
import { createRedisBudget } from '../../src/redis/index.js';
import { clockScheduler, createScaledClock } from '../../src/emulator/index.js';
import type { PipelineDefinition } from '../../src/pipeline/pipeline-definition.js';

/** A pipeline as JSON: step name → its workflow, dependencies, retries and variables. */
export interface DagInput {
  readonly steps: Readonly<Record<string, { readonly canvasId: string; readonly dependsOn?: readonly string[]; readonly retry?: number; readonly variables?: Readonly<Record<string, string>> }>>;
}

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`worker-process: ${name} is not set`);
  return value;
}

const scheduler = clockScheduler(createScaledClock(Number(setting('EMULATOR_SPEED')), Date.now, Number(setting('EMULATOR_REAL_START'))));
const client = createClient({
  apiKey: setting('FLOWSTREAM_API_KEY'),
  baseUrl: setting('FLOWSTREAM_BASE_URL'),
  scheduler,
  polling: { minMs: 1_000, maxMs: 4_000 },
  timeoutMs: Number(setting('TIMEOUT_MS')),
  // Every request of every worker goes through the account's one budget, in Redis.
  budget: createRedisBudget({
    redis: setting('REDIS_URL'),
    account: setting('PREFIX'),
    timeScale: Number(setting('EMULATOR_SPEED')),
    scheduler,
    requestsPerMinute: Number(setting('REQUESTS_PER_MINUTE')),
    latencyAllowanceMs: Number(setting('LATENCY_ALLOWANCE_MS')),
  }),
});
const inDoubt = setting('IN_DOUBT');
if (inDoubt !== 'fail' && inDoubt !== 'start-again') throw new Error(`worker-process: IN_DOUBT is ${inDoubt}`);

const worker = createPipelineWorker({
  connection: setting('REDIS_URL'),
  prefix: setting('PREFIX'),
  name: setting('WORKER_NAME'),
  client,
  definitions: {
    dag: (input: DagInput): PipelineDefinition<string> => ({
      steps: Object.fromEntries(
        Object.entries(input.steps).map(([name, { canvasId, dependsOn, retry, variables }]) => [
          name,
          { canvasId, ...(dependsOn === undefined ? {} : { dependsOn }), ...(retry === undefined ? {} : { retry }), input: () => ({ variables: { ...variables } }) },
        ]),
      ),
    }),
  },
  concurrency: Number(setting('CONCURRENCY')),
  lockDuration: Number(setting('LOCK_DURATION_MS')),
  stalledInterval: Number(setting('STALLED_INTERVAL_MS')),
  pipeline: { scheduler, inDoubt },
  logger: { warn: (message, meta) => { console.error(`warn: ${message} ${JSON.stringify(meta)}`); } },
});

process.once('SIGTERM', () => {
  void worker.detach().then(() => {
    console.log('detached');
    process.exit(0);
  });
});
console.log('worker ready');
