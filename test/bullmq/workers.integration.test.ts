import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { task } from '../pipeline/harness.js';
import { scrubbedEnv, startProcess } from '../cli/support/child-process.js';
import { bundleProcessScripts, chain, type Fleet, type ProcessScripts, startFleet, startsOf } from './fleet.js';

// Workers as processes of their own (worker-process.ts), on a real redis-server and the emulator over
// loopback; the test process holds the queue and follows pipelines with events$. Leases are short
// (1 s, checked every 0.5 s) so that a killed worker's pipeline is taken over in a second or two.

/** Emulator ms per real ms in the crash tests: a 60 s step lasts 3 real seconds. */
const SPEED = 20;
/**
 * In the load test: the account's minute lasts 0.6 real seconds. The service counts arrivals, and a
 * busy machine spreads them by up to a few hundred real ms: the workers' budgets allow for 200 real
 * ms (fleet.ts), 20 s of emulator time here.
 */
const LOAD_SPEED = 100;

let scripts: ProcessScripts;
beforeAll(async () => {
  scripts = await bundleProcessScripts();
});
afterAll(async () => {
  await scripts.close();
});

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const CHAIN_WORKFLOWS = [task('c-one', { durationMs: 10_000 }), task('c-two', { durationMs: 60_000 }), task('c-three', { durationMs: 10_000 })];
const CHAIN = chain(['c-one', 'c-two', 'c-three']);

describe('pipeline workers as processes (flowstream/bullmq)', () => {
  it('takes over the pipeline of a worker killed (kill -9) while it followed a step: re-attached with watch, every step started exactly once', { timeout: 40_000 }, async () => {
    fleet = await startFleet({ scripts, speed: SPEED, workflows: CHAIN_WORKFLOWS });
    const { emulator } = fleet;
    const a = await fleet.startWorker({ name: 'a' });
    const pipeline = await fleet.start('p-crash', CHAIN);
    await pipeline.step('one', 'starting');
    const b = await fleet.startWorker({ name: 'b' });
    const two = await pipeline.step('two', 'running');
    a.child.kill('SIGKILL');
    await a.exited();
    const killedAt = fleet.lastRequest();

    const result = await pipeline.result;
    expect(result).toMatchObject({ status: 'finish', steps: { one: { status: 'finish' }, two: { status: 'finish', executionId: two.executionId, attempt: 1 }, three: { status: 'finish' } } });
    expect(['c-one', 'c-two', 'c-three'].map((canvasId) => startsOf(emulator, canvasId))).toEqual([1, 1, 1]);
    // b re-attached to the step a followed: it read that execution after a died, and aborted nothing.
    expect(emulator.requests.list({ endpoint: 'status', executionId: two.executionId!, after: killedAt }).length).toBeGreaterThan(0);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(await processedBy(fleet, 'p-crash')).toBe('b');
    expect(b.child.exitCode).toBeNull();
  });

  describe('a worker killed (kill -9) between a start’s send and its answer', () => {
    const WORKFLOWS = [task('c-one', { durationMs: 10_000 }), task('c-two', { durationMs: 10_000 })];
    const TWO = chain(['c-one', 'c-two']);

    /** a sends the first start, which the emulator holds 1.5 s before answering; a dies meanwhile. */
    async function killedMidStart(inDoubt: 'fail' | 'start-again'): Promise<{ fleet: Fleet; result: Awaited<ReturnType<Fleet['start']>>['result'] }> {
      const started = await startFleet({ scripts, speed: SPEED, workflows: WORKFLOWS });
      fleet = started;
      const held = started.emulator.faults.add({ kind: 'latency', ms: 1_500, endpoint: 'run', times: 1 });
      const a = await started.startWorker({ name: 'a' });
      const pipeline = await started.start(`p-doubt-${inDoubt}`, TWO);
      await pipeline.step('one', 'starting');
      await expect.poll(() => held.hits).toBe(1);
      a.child.kill('SIGKILL');
      await a.exited();
      // The start a sent reaches the service after all (logged once handled); b comes after it, never
      // within the service's 1 s duplicate window of it (service.md §2.2), which is 50 real ms here.
      await expect.poll(() => startsOf(started.emulator, 'c-one'), { timeout: 5_000 }).toBe(1);
      await started.startWorker({ name: 'b', inDoubt });
      return { fleet: started, result: pipeline.result };
    }

    it("leaves the step in doubt, not started again, with inDoubt: 'fail'", { timeout: 30_000 }, async () => {
      const { fleet: { emulator }, result } = await killedMidStart('fail');
      expect(await result).toMatchObject({ status: 'failed', steps: { one: { status: 'failed', attempt: 1, error: { name: 'StepInDoubtError', code: 'STEP_IN_DOUBT' } }, two: { status: 'skipped', blockedBy: 'one' } } });
      // The start a sent did reach the service: its execution exists, and it is the only one.
      expect(emulator.executions.list().filter((execution) => execution.canvasId === 'c-one')).toHaveLength(1);
      expect(startsOf(emulator, 'c-one')).toBe(1);
      expect(startsOf(emulator, 'c-two')).toBe(0);
    });

    it("starts the step once more with inDoubt: 'start-again', as attempt 2", { timeout: 30_000 }, async () => {
      const { fleet: { emulator }, result } = await killedMidStart('start-again');
      expect(await result).toMatchObject({ status: 'finish', steps: { one: { status: 'finish', attempt: 2 }, two: { status: 'finish', attempt: 1 } } });
      expect(startsOf(emulator, 'c-one')).toBe(2);
      expect(emulator.executions.list().filter((execution) => execution.canvasId === 'c-one')).toHaveLength(2);
      expect(startsOf(emulator, 'c-two')).toBe(1);
    });
  });

  it('cancels from a third process: every running execution on every worker aborted exactly once, nothing started after', { timeout: 40_000 }, async () => {
    fleet = await startFleet({ scripts, speed: SPEED, workflows: [task('c-long', { durationMs: 600_000 }), task('c-after', { durationMs: 10_000 })] });
    const { emulator } = fleet;
    // Three branches at once, then a step after all three: one pipeline per worker.
    const fan = (pipeline: string) => ({
      steps: {
        a: { canvasId: 'c-long', variables: { pipeline, branch: 'a' } },
        b: { canvasId: 'c-long', variables: { pipeline, branch: 'b' } },
        c: { canvasId: 'c-long', variables: { pipeline, branch: 'c' } },
        after: { canvasId: 'c-after', dependsOn: ['a', 'b', 'c'], variables: { pipeline } },
      },
    });
    await Promise.all([fleet.startWorker({ name: 'a' }), fleet.startWorker({ name: 'b' })]);
    const pipelines = [await fleet.start('p-cancel-1', fan('1')), await fleet.start('p-cancel-2', fan('2'))];
    const running = await Promise.all(pipelines.flatMap((pipeline) => ['a', 'b', 'c'].map((step) => pipeline.step(step, 'running'))));
    expect(new Set([await processedBy(fleet, 'p-cancel-1'), await processedBy(fleet, 'p-cancel-2')])).toEqual(new Set(['a', 'b']));

    const canceller = startProcess(process.execPath, [scripts.canceller], {
      env: scrubbedEnv({ REDIS_URL: fleet.redisUrl, PREFIX: fleet.prefix, PIPELINE_IDS: 'p-cancel-1,p-cancel-2' }),
    });
    expect(await canceller.exited()).toBe(0);
    const results = await Promise.all(pipelines.map((pipeline) => pipeline.result));
    for (const result of results) {
      expect(result).toMatchObject({ status: 'cancelled', steps: { a: { status: 'aborted' }, b: { status: 'aborted' }, c: { status: 'aborted' }, after: { status: 'aborted' } } });
    }
    const executions = running.map((entry) => entry.executionId!);
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).map((request) => request.executionId).sort()).toEqual([...executions].sort());
    for (const executionId of executions) expect(emulator.executions.get(executionId)?.status).toBe('failed');
    expect(startsOf(emulator, 'c-long')).toBe(6);
    expect(startsOf(emulator, 'c-after')).toBe(0);
  });

  it('detaches a worker on SIGTERM: nothing aborted, its pipeline handed back at once and finished by another worker', { timeout: 40_000 }, async () => {
    fleet = await startFleet({ scripts, speed: SPEED, workflows: CHAIN_WORKFLOWS });
    const { emulator } = fleet;
    // A lease of 60 s: only a hand-back can bring the pipeline to b within this test.
    const a = await fleet.startWorker({ name: 'a', lockDurationMs: 60_000, stalledIntervalMs: 60_000 });
    const pipeline = await fleet.start('p-deploy', CHAIN);
    await pipeline.step('one', 'starting');
    await fleet.startWorker({ name: 'b', lockDurationMs: 60_000, stalledIntervalMs: 60_000 });
    const two = await pipeline.step('two', 'running');
    const signalledAt = fleet.lastRequest();
    a.child.kill('SIGTERM');
    expect(await a.exited()).toBe(0);
    expect(a.stdout()).toMatch(/^detached$/mu);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);

    const result = await pipeline.result;
    expect(result).toMatchObject({ status: 'finish', steps: { one: { status: 'finish' }, two: { status: 'finish', executionId: two.executionId }, three: { status: 'finish' } } });
    expect(['c-one', 'c-two', 'c-three'].map((canvasId) => startsOf(emulator, canvasId))).toEqual([1, 1, 1]);
    expect(emulator.requests.list({ endpoint: 'status', executionId: two.executionId!, after: signalledAt }).length).toBeGreaterThan(0);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(await processedBy(fleet, 'p-deploy')).toBe('b');
  });

  it('runs 100 pipelines of 3 steps across 4 workers on one account: all finish, the service never answers 429', { timeout: 60_000 }, async () => {
    fleet = await startFleet({ scripts, speed: LOAD_SPEED, workflows: [task('c-load', { durationMs: 5_000 })] });
    const { emulator } = fleet;
    const started = performance.now();
    // The workers share the account's one budget in Redis: 100 a minute for all of them together.
    await Promise.all(['w1', 'w2', 'w3', 'w4'].map((name) => fleet!.startWorker({ name, concurrency: 25, requestsPerMinute: 100, lockDurationMs: 10_000, stalledIntervalMs: 5_000 })));
    const ready = performance.now();
    // Each step's variables differ: identical starts within 1 s would be refused as duplicates (service.md §2.2).
    const pipelines = await Promise.all(
      Array.from({ length: 100 }, (_, n) => fleet!.start(`p-load-${n}`, { steps: { one: { canvasId: 'c-load', variables: { n: String(n), step: 'one' } }, two: { canvasId: 'c-load', dependsOn: ['one'], variables: { n: String(n), step: 'two' } }, three: { canvasId: 'c-load', dependsOn: ['two'], variables: { n: String(n), step: 'three' } } } })),
    );
    const results = await Promise.all(pipelines.map((pipeline) => pipeline.result));
    const finishedAt = performance.now();
    expect(results.filter((result) => result.status === 'finish')).toHaveLength(100);
    expect(startsOf(emulator, 'c-load')).toBe(300);
    const requests = emulator.requests.list();
    expect(requests.filter((request) => request.status === 429)).toEqual([]);
    const minutes = (emulator.clock.now() - (requests[0]?.emulatorTime ?? 0)) / 60_000;
    console.log(`100 pipelines × 3 steps, 4 workers: ${requests.length} requests in ${minutes.toFixed(1)} emulator minutes; workers ready in ${Math.round(ready - started)} ms, pipelines done ${Math.round(finishedAt - ready)} ms later`);
  });
});

/** The worker that ran (or runs) a pipeline's job last, as BullMQ keeps it. */
async function processedBy(fleet: Fleet, pipelineId: string): Promise<string | undefined> {
  const queue = new Queue('flowstream-pipelines', { connection: { path: fleet.server.socket }, prefix: fleet.prefix });
  try {
    return (await queue.getJob(pipelineId))?.processedBy;
  } finally {
    await queue.close();
  }
}
