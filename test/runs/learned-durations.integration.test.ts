import { lastValueFrom, tap } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAccountBudget } from '../../src/budget/account-budget.js';
import { createDurationModel } from '../../src/budget/duration-model.js';
import { createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { mulberry32 } from '../../src/emulator/engine/seeded-random.js';

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

/** Three chained tasks of 60, 90 and 75 s, each duration varying (coefficient of variation 0.3) per execution. */
const VARYING: WorkflowDefinition = {
  canvasId: 'c-varying',
  title: 'Varying',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-gather', parents: ['node-start'], durationMs: 60_000, durationCv: 0.3 },
    { id: 'node-write', parents: ['node-gather'], durationMs: 90_000, durationCv: 0.3 },
    { id: 'node-review', parents: ['node-write'], durationMs: 75_000, durationCv: 0.3 },
  ],
};

describe('a warm model on an account the runs share', () => {
  it('sees ten runs\' changes within 0.9× the uniform bound (p50): it spends the runs\' share of the account where changes are likely', async () => {
    vi.spyOn(Math, 'random').mockImplementation(mulberry32(3));
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false, samples: false, workflows: [VARYING] });
    open.push(emulator);
    // The model as twenty earlier runs taught it: each node's durations at its scripted spread.
    const durations = createDurationModel();
    const draw = mulberry32(5);
    for (const node of VARYING.nodes) {
      if (node.durationMs === undefined) continue;
      for (let sample = 0; sample < 20; sample += 1) durations.record('c-varying', node.id, node.durationMs * Math.exp(0.3 * normal(draw)));
    }
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, durations });
    const runs = 10;
    const seen = new Map<string, number>();
    let ended = 0;
    const following = Array.from({ length: runs }, (_, item) =>
      lastValueFrom(
        client.run('c-varying', { variables: { item } }, { output: 'final' }).pipe(
          tap((event) => {
            const key = event.type === 'node' ? `${event.nodeId}:${event.status === 'executing' ? 'start' : 'end'}` : event.type === 'finished' ? 'settle' : undefined;
            if (key !== undefined && !seen.has(`${event.executionId}/${key}`)) seen.set(`${event.executionId}/${key}`, clock.now());
          }),
        ),
      ).finally(() => (ended += 1)),
    );
    await driveClock(clock, { until: () => ended === runs });
    await Promise.all(following);
    const latencies = emulator.executions.list().flatMap((execution) => [
      ...execution.nodes.flatMap((node) =>
        node.startedAt === undefined || node.endedAt === undefined || node.type !== 'task'
          ? []
          : [(seen.get(`${execution.executionId}/${node.nodeId}:start`) ?? Number.NaN) - node.startedAt, (seen.get(`${execution.executionId}/${node.nodeId}:end`) ?? Number.NaN) - node.endedAt],
      ),
      (seen.get(`${execution.executionId}/settle`) ?? Number.NaN) - (execution.settledAt ?? Number.NaN),
    ]);
    expect(latencies).toHaveLength(runs * 7);
    expect(latencies.every(Number.isFinite)).toBe(true);
    // service.md §2.1: ten runs sharing 100 reads a minute are each read every 6 s, a change waiting 3 s on average.
    const boundMs = (runs / (2 * (100 / 60))) * 1000;
    const p50 = latencies.toSorted((a, b) => a - b)[Math.floor(latencies.length / 2)] ?? Number.NaN;
    console.info(`warm model, ten runs: p50 ${(p50 / boundMs).toFixed(2)}× the uniform bound`);
    expect(p50).toBeLessThan(0.9 * boundMs);
  });
});

/** A standard normal draw (Box–Muller) from `random`. */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}
