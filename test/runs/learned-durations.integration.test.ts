import { lastValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAccountBudget } from '../../src/budget/account-budget.js';
import { createDurationModel } from '../../src/budget/duration-model.js';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock, type WorkflowDefinition } from '../../src/emulator/index.js';

const open: Emulator[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** Two chained tasks of 40 s and 60 s: long against the cadence, so timing the reads shows. */
const CHAIN: WorkflowDefinition = {
  canvasId: 'c-chain',
  title: 'Chain',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-a', parents: ['node-start'], durationMs: 40_000 },
    { id: 'node-b', parents: ['node-a'], durationMs: 60_000 },
  ],
};

async function world(): Promise<{ emulator: Emulator; clock: ManualClock }> {
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [CHAIN] });
  open.push(emulator);
  return { emulator, clock };
}

/** Runs the chain once to its end on the manual clock; the status reads it made. */
async function runOnce(emulator: Emulator, clock: ManualClock, client: ReturnType<typeof createClient>): Promise<number> {
  const before = emulator.requests.list().filter((request) => request.endpoint === 'status').length;
  let ended = false;
  const done = lastValueFrom(client.run('c-chain', {}, { output: 'final' })).finally(() => (ended = true));
  await driveClock(clock, { until: () => ended });
  await done;
  return emulator.requests.list().filter((request) => request.endpoint === 'status').length - before;
}

describe('learned durations on the emulator', () => {
  it('a client learns its workflow from the runs it follows, shows the model, and reads less once it knows', async () => {
    // No jitter: the cold runs' reads are the same, run after run.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { emulator, clock } = await world();
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler });
    const reads: number[] = [];
    for (let run = 0; run < 5; run += 1) reads.push(await runOnce(emulator, clock, client));
    // The service's own times (service.md §4.2): exactly 40 s and 60 s.
    expect(client.durations?.estimate('c-chain', 'node-a')).toMatchObject({ samples: 5, medianMs: 40_000 });
    expect(client.durations?.estimate('c-chain', 'node-b')).toMatchObject({ samples: 5, medianMs: 60_000 });
    expect(client.durations?.snapshot().nodes.map((node) => node.nodeId)).toEqual(['node-a', 'node-b']);
    // Cold for three runs (the model needs three durations): the same reads each time; then fewer (58, then 46).
    expect(reads[1]).toBe(reads[0]);
    expect(reads[2]).toBe(reads[0]);
    expect(reads[3]).toBeLessThan(reads[0] ?? 0);
  });

  it('durations: false keeps no model; a budget\'s model is shared by the clients given it', async () => {
    const { emulator, clock } = await world();
    const connection = { apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler };
    expect(createClient({ ...connection, durations: false }).durations).toBeUndefined();
    const durations = createDurationModel();
    const budget = createAccountBudget({ scheduler: emulator.scheduler, durations });
    const first = createClient({ ...connection, budget });
    const second = createClient({ ...connection, budget });
    expect(first.durations).toBe(durations);
    await runOnce(emulator, clock, first);
    await runOnce(emulator, clock, second);
    expect(durations.toJSON().nodes.map((node) => node.samplesMs.length)).toEqual([2, 2]);
    await budget.close();
  });
});
