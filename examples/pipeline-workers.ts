/**
 * Pipelines on a fleet of workers (flowstream/bullmq): a queue, two worker processes, a pipeline,
 * a crash of the worker running it (kill -9), and the other worker taking it over once the lease of
 * the dead one ran out — the step that was running is re-attached with `watch`, no step starts twice.
 *
 * Node-only (Redis, BullMQ, child processes). Run: `npx tsx examples/pipeline-workers.ts`. It uses
 * REDIS_URL when set (`redis://127.0.0.1:6379`, `redis+unix:///path/redis.sock`); otherwise it starts
 * `redis-server` from your PATH on a unix socket in a temporary folder (nothing saved, no TCP port).
 * It runs against an emulator it starts itself, 4× faster than real time; the workers are this file
 * again (`… pipeline-workers.ts worker`), on the emulator's clock.
 * The examples import from `../src`; in your code, import from `flowstream`, `flowstream/bullmq` and
 * `flowstream/emulator`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { filter, firstValueFrom, share } from 'rxjs';
import { createPipelineQueue, createPipelineWorker } from '../src/bullmq/index.js';
import { clockScheduler, createEmulator, createScaledClock } from '../src/emulator/index.js';
import { createClient, outputText, type PipelineDefinition } from '../src/index.js';

const SPEED = 4;
/** Leases this short only for the example: a service keeps BullMQ's 30 s (a worker's pauses must not cost it its pipelines). */
const LEASE = { lockDuration: 1_500, stalledInterval: 500 } as const;

type Step = 'brief' | 'scan' | 'report';

/** The pipeline the workers know as `market-report`, built from the input given to `queue.start`. */
function marketReport(input: { readonly product: string }): PipelineDefinition<Step> {
  return {
    steps: {
      brief: { canvasId: 'c-sample-linear', input: () => ({ variables: { topic: input.product } }) },
      scan: { canvasId: 'c-sample-parallel', dependsOn: ['brief'], input: (results) => ({ variables: { brief: outputText(results.brief!) } }), retry: 1 },
      report: { canvasId: 'c-sample-files', dependsOn: ['scan'], input: (results) => ({ variables: { market: outputText(results.scan!) } }) },
    },
  };
}

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}

/** A worker process: runs pipelines of the queue until it is killed, or detaches on SIGTERM. */
function runWorker(): void {
  const scheduler = clockScheduler(createScaledClock(SPEED, Date.now, Number(setting('EXAMPLE_REAL_START'))));
  const client = createClient({ apiKey: setting('FLOWSTREAM_API_KEY'), baseUrl: setting('FLOWSTREAM_BASE_URL'), scheduler });
  const worker = createPipelineWorker({
    connection: setting('REDIS_URL'),
    client,
    definitions: { 'market-report': marketReport },
    concurrency: 5,
    name: setting('WORKER_NAME'),
    pipeline: { scheduler },
    ...LEASE,
  });
  process.once('SIGTERM', () => {
    void worker.detach().then(() => process.exit(0));
  });
  console.log(`${setting('WORKER_NAME')} ready (pid ${process.pid})`);
}

/** redis-server from PATH on a fresh unix socket, ready when it answers PING. */
async function startRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'pipeline-workers-'));
  const socket = join(dir, 'redis.sock');
  const server = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const failed = new Promise<never>((_, reject) => {
    server.once('error', (error) => {
      reject(new Error(`could not start redis-server from PATH (${error.message}); install it or set REDIS_URL`));
    });
  });
  await Promise.race([answersPing(socket), failed]);
  return {
    url: `redis+unix://${socket}`,
    stop: async () => {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill();
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Waits (up to 10 s, trying every 50 ms) for a Redis on `socket` to answer PING. */
async function answersPing(socket: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const probe = new Redis({ path: socket, lazyConnect: true, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      probe.disconnect();
    }
  }
}

async function main(): Promise<void> {
  const redis = process.env['REDIS_URL'] === undefined ? await startRedis() : { url: process.env['REDIS_URL'], stop: () => Promise.resolve() };
  const clock = createScaledClock(SPEED);
  const emulator = await createEmulator({ clock });
  const queue = createPipelineQueue({ connection: redis.url });
  const workers: ChildProcess[] = [];
  const startWorker = async (name: string): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'worker'], {
      env: { ...process.env, REDIS_URL: redis.url, FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url, EXAMPLE_REAL_START: String(clock.realStart), WORKER_NAME: name },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    workers.push(child);
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => {
        reject(new Error(`${name} exited (${String(code)}) before it was ready`));
      });
      child.stdout.setEncoding('utf8').on('data', (text: string) => {
        process.stdout.write(text);
        if (text.includes('ready')) resolve();
      });
    });
    return child;
  };

  try {
    const first = await startWorker('worker-1');
    const pipelineId = `market-report-${String(Date.now())}`;
    const progress = queue.events$(pipelineId).pipe(share());
    const stepReached = (step: Step, statuses: readonly string[]) => firstValueFrom(progress.pipe(filter((event) => event.type === 'step' && event.step === step && statuses.includes(event.entry.status))));
    const done = firstValueFrom(progress.pipe(filter((event) => event.type === 'finished')));
    progress.subscribe((event) => {
      if (event.type === 'step') console.log(`step ${event.step}: ${event.entry.status}${event.entry.executionId === undefined ? '' : ` (${event.entry.executionId})`}`);
    });
    await queue.start('market-report', { product: 'a tide-clock app' }, { pipelineId });
    console.log(`queued pipeline ${pipelineId}`);

    // worker-1 took it; worker-2 joins the fleet; worker-1 dies while the second step runs.
    // (A follower that comes in late sees where a step stands; 'starting' may have become 'running' by then.)
    await stepReached('brief', ['starting', 'running']);
    await startWorker('worker-2');
    await stepReached('scan', ['running']);
    first.kill('SIGKILL');
    console.log(`worker-1 killed (kill -9) while it followed scan; worker-2 takes over once its lease of ${LEASE.lockDuration} ms runs out`);

    const finished = await done;
    console.log(`pipeline ${finished.result.status}`);
    for (const [step, summary] of Object.entries(finished.result.steps)) console.log(`outcome ${step}: ${summary.status} (${summary.executionId ?? 'no execution'})`);
    for (const canvasId of ['c-sample-linear', 'c-sample-parallel', 'c-sample-files']) {
      console.log(`${canvasId} started ${emulator.requests.list({ endpoint: 'run', canvasId }).length} time(s)`);
    }
    console.log(`aborts sent: ${emulator.requests.list({ endpoint: 'abort' }).length}`);
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
    await queue.close();
    await emulator.close();
    await redis.stop();
  }
}

if (process.argv[2] === 'worker') runWorker();
else await main();
