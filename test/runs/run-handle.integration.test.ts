import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { SchedulerLike } from 'rxjs';
import { type Client, createClient } from '../../src/client.js';
import { clockScheduler, createEmulator, createManualClock, type Emulator } from '../../src/emulator/index.js';
import type { RunState } from '../../src/runs/run-state.js';

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
    const { emulator, client } = await setup();
    const run = client.startRun('c-sample-linear');
    const working = await firstValueFrom(run.state.pipe(filter((state) => state.nodes.some((node) => node.status === 'executing'))));
    // The start node has no work: it is not counted (a fresh run once read 25 %).
    expect(working.progress).toEqual({ succeeded: 0, failed: 0, done: 0, total: 3 });
    const result = await run.cancel();
    expect(result).toMatchObject({ executionId: await run.executionId, status: 'failed', endedBy: 'aborted' });
    expect(result.failedNodes.map((node) => node.error?.message)).toContain('Workflow aborted by user');
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(1);
    const final = await firstValueFrom(run.state.pipe(filter((state) => state.result !== undefined)));
    expect(final).toMatchObject({ status: 'failed', result: { endedBy: 'aborted' } });
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
