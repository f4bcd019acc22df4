import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { SchedulerLike } from 'rxjs';
import { type Client, createClient } from '../../src/client.js';
import { clockScheduler, createEmulator, createManualClock, driveClock, type Emulator } from '../../src/emulator/index.js';
import type { RunResult } from '../../src/domain/model.js';
import type { RunState } from '../../src/runs/run-state.js';
import { LONG_BRANCH } from '../support/long-branch.js';

const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** The emulator 100× faster (a 6 s node takes 60 ms), reached in-process, with a client polling at 5–20 ms. */
async function setup(budget: Parameters<typeof createClient>[0]['budget'] = false, scheduler?: SchedulerLike): Promise<{ emulator: Emulator; client: Client }> {
  const emulator = await createEmulator({ speed: 100, rateLimit: false, listen: false });
  open.push(emulator);
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget, polling: { minMs: 5, maxMs: 20 }, ...(scheduler === undefined ? {} : { scheduler }) });
  return { emulator, client };
}

/** A client clock that never moves: only the budget's burst goes out. */
const standingTime = (): SchedulerLike => clockScheduler(createManualClock());

describe('run handles against the emulator', () => {
  it('cancels a run while its first task executes: one abort, and the result says aborted (service.md §3.5)', async () => {
    // Emulator time moves only when the client waits (`driveClock`): the research task's 6 s are read
    // in the middle, however slowly this machine answers.
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, rateLimit: false, listen: false });
    open.push(emulator);
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false, scheduler: emulator.scheduler });
    const run = client.startRun('c-sample-linear');
    let working: RunState | undefined;
    run.state.pipe(filter((state) => state.nodes.some((node) => node.status === 'executing'))).subscribe((state) => (working ??= state));
    await driveClock(clock, { until: () => working !== undefined });
    // The start node has no work: it is not counted (a fresh run once read 25 %).
    expect(working?.progress).toEqual({ succeeded: 0, failed: 0, done: 0, total: 3 });
    expect(working?.nodes.find((node) => node.status === 'executing')?.nodeId).toBe('node-research');
    let result: RunResult | undefined;
    void run.cancel().then((value) => (result = value));
    await driveClock(clock, { until: () => result !== undefined });
    expect(result).toMatchObject({ executionId: await run.executionId, status: 'failed', endedBy: 'aborted' });
    expect(result?.failedNodes.map((node) => node.error?.message)).toEqual(['Workflow aborted by user', 'Workflow aborted by user', 'Workflow aborted by user']);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(1);
    const final = await firstValueFrom(run.state.pipe(filter((state) => state.result !== undefined)));
    expect(final).toMatchObject({ status: 'failed', progress: { succeeded: 0, failed: 3, done: 3, total: 3 }, result: { endedBy: 'aborted' } });
  });

  it('cancel() after a failure aborts, once, the branches the failed execution left running (service.md §3.3)', async () => {
    const { emulator, client } = await setup();
    const canvasId = emulator.workflows.add(LONG_BRANCH);
    const run = client.startRun(canvasId, {}, { failOnWorkflowError: false });
    const result = await run.result;
    expect(result).toMatchObject({ status: 'failed', endedBy: 'failed' });
    expect(result.runningNodes.map((node) => node.nodeId)).toEqual(['node-survey']);
    // Left running by default (`onFailedBranches: 'leave'`): nothing aborted it yet.
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
    await expect(run.cancel()).resolves.toBe(result);
    await expect(run.cancel()).resolves.toBe(result);
    // Sent in the background: waited for, then counted.
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort', executionId: result.executionId })).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(1);
  });

  it('withdraws a start still waiting for the budget: nothing is sent for it', async () => {
    const { emulator, client } = await setup({ burst: 1 }, standingTime());
    const first = client.startRun('c-sample-linear');
    await first.executionId;
    const queued = client.startRun('c-sample-linear');
    await expect(queued.cancel()).resolves.toMatchObject({ executionId: '', endedBy: 'aborted' });
    await expect(queued.executionId).rejects.toMatchObject({ name: 'AbortError' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    first.detach();
  });

  it('follows a run once for many subscribers and resolves with endedBy: finish', async () => {
    const { emulator, client } = await setup();
    const run = client.startRun('c-sample-parallel');
    const states: RunState[] = [];
    run.state.subscribe((state) => states.push(state));
    run.events.subscribe();
    const result = await run.result;
    expect(result).toMatchObject({ status: 'finish', endedBy: 'finish' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    for (const state of states) if (state.status === 'finish') expect(state.nodes.every((node) => node.status === 'finish')).toBe(true);
    expect(states.at(-1)).toMatchObject({ progress: { done: 3, total: 3 }, result: { endedBy: 'finish' } });
    expect(states.at(-1)?.nodes.filter((node) => node.task).every((node) => node.elapsedMs !== undefined)).toBe(true);
  });

  it('client.events yields sampled states, ending with the result', async () => {
    const { client } = await setup();
    const states: RunState[] = [];
    for await (const state of client.events(client.run('c-sample-linear'), { sampleStateMs: 50 })) states.push(state);
    expect(states.at(-1)).toMatchObject({ status: 'finish', progress: { done: 3, total: 3 }, result: { endedBy: 'finish' } });
    expect(() => client.events(client.run('c-sample-linear'), { sampleStateMs: 0 })).toThrow(/sampleStateMs/);
  });
});
