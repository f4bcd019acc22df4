import { lastValueFrom, type Observable, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, createManualClock, driveClock, type Emulator, type ManualClock, type WorkflowDefinition } from '../../src/emulator/index.js';
import { isStartInDoubtError, StartInDoubtError } from '../../src/errors/start-in-doubt-error.js';
import { InvalidArgumentError } from '../../src/errors/validation-errors.js';
import type { IdempotencyClaim, IdempotencyStore } from '../../src/runs/idempotency.js';
import type { RunResult } from '../../src/domain/model.js';
import type { RunEvent } from '../../src/runs/events.js';

const CANVAS = 'c-one-task';
const ONE_TASK: WorkflowDefinition = {
  canvasId: CANVAS,
  title: 'One task',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-task', parents: ['node-start'], durationMs: 4_000, messages: [{ content: 'done' }] },
  ],
};
const TTL_MS = 60_000;

const open: Emulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** An emulator on a manual clock, reached in-process, and a client on its clock with its own (default) idempotency store. */
async function setup(): Promise<{ clock: ManualClock; emulator: Emulator; client: Client }> {
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false, samples: false, rateLimit: false, workflows: [ONE_TASK] });
  open.push(emulator);
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false });
  return { clock, emulator, client };
}

interface Outcome {
  events?: RunEvent[];
  error?: unknown;
}

/** Subscribes to each run at once and drives the clock until every one ended. */
async function runAll(clock: ManualClock, runs: readonly Observable<RunEvent>[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = runs.map(() => ({}));
  runs.forEach((run, index) => {
    const outcome = outcomes[index]!;
    run.pipe(toArray()).subscribe({
      next: (events) => (outcome.events = events),
      error: (error: unknown) => (outcome.error = error),
    });
  });
  await driveClock(clock, { until: () => outcomes.every((outcome) => outcome.events !== undefined || outcome.error !== undefined) });
  return outcomes;
}

function resultOf(outcome: Outcome): RunResult | undefined {
  const last = outcome.events?.at(-1);
  return last?.type === 'finished' ? last.result : undefined;
}

describe('RunOptions.idempotencyKey with the client’s store in memory', () => {
  it('starts one execution for concurrent runs with one key: every caller follows it to the same result', async () => {
    const { clock, emulator, client } = await setup();
    const runs = Array.from({ length: 5 }, () => client.run(CANVAS, {}, { idempotencyKey: 'invoice-7' }));
    const outcomes = await runAll(clock, runs);

    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.executions.list()).toHaveLength(1);
    const executionId = emulator.executions.list()[0]!.executionId;
    for (const outcome of outcomes) {
      expect(outcome.error).toBeUndefined();
      // A follower joins the poll of the run that started it (the client's hub): its first event is the state so far.
      expect(outcome.events?.[0]).toMatchObject({ type: expect.stringMatching(/^(started|snapshot)$/u) as unknown, executionId });
      expect(resultOf(outcome)).toMatchObject({ executionId, canvasId: CANVAS, status: 'finish', endedBy: 'finish', output: resultOf(outcomes[0]!)?.output });
    }
  });

  it('starts a new execution once the key’s TTL has passed, and not before', async () => {
    const { clock, emulator, client } = await setup();
    const keyed = { idempotencyKey: 'daily-report', idempotencyTtlMs: TTL_MS };
    const claimedAt = clock.now();
    const [first] = await runAll(clock, [client.run(CANVAS, {}, keyed)]);
    const [within] = await runAll(clock, [client.run(CANVAS, {}, keyed)]);
    expect(resultOf(within!)?.executionId).toBe(resultOf(first!)?.executionId);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);

    await driveClock(clock, { toTime: claimedAt + TTL_MS });
    const [after] = await runAll(clock, [client.run(CANVAS, {}, keyed)]);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(2);
    expect(resultOf(after!)?.executionId).not.toBe(resultOf(first!)?.executionId);
  });

  it('a follower that leaves does not abort the execution; the run that started it still gets its result', async () => {
    const { clock, emulator, client } = await setup();
    let result: RunResult | undefined;
    client.run(CANVAS, {}, { idempotencyKey: 'k' }).subscribe((event) => {
      if (event.type === 'finished') result = event.result;
    });
    // The key alone decides: a run with other variables follows the execution the key started.
    const follower = client.run(CANVAS, { variables: { other: 'input' } }, { idempotencyKey: 'k' }).subscribe();
    await driveClock(clock, { until: () => emulator.executions.list()[0]?.status === 'executing' });
    follower.unsubscribe();
    await driveClock(clock, { until: () => result !== undefined });
    expect(result).toMatchObject({ status: 'finish', endedBy: 'finish' });
    expect(emulator.executions.list()).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });

  it('a run left before its key was claimed gives the key back: the next runs with it share one execution', async () => {
    const { clock, emulator, client } = await setup();
    client.run(CANVAS, {}, { idempotencyKey: 'k' }).subscribe().unsubscribe();
    const outcomes = await runAll(clock, [client.run(CANVAS, {}, { idempotencyKey: 'k' }), client.run(CANVAS, {}, { idempotencyKey: 'k' })]);
    expect(outcomes.map((outcome) => resultOf(outcome)?.status)).toEqual(['finish', 'finish']);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
  });

  it('a follower’s signal ends only its own run, waiting or following: it errors with the reason, and the execution goes on', async () => {
    const { clock, emulator, client } = await setup();
    const waiting = new AbortController();
    const following = new AbortController();
    let result: RunResult | undefined;
    client.run(CANVAS, {}, { idempotencyKey: 'k' }).subscribe((event) => {
      if (event.type === 'finished') result = event.result;
    });
    // Subscribed in the same task: both wait for the first run's start to answer.
    const errors: unknown[] = [];
    for (const controller of [waiting, following]) {
      client.run(CANVAS, { variables: { other: 'input' } }, { idempotencyKey: 'k', signal: controller.signal }).subscribe({ error: (error: unknown) => errors.push(error) });
    }
    waiting.abort(new Error('left while waiting'));
    await driveClock(clock, { until: () => emulator.executions.list()[0]?.status === 'executing' });
    following.abort(new Error('left while following'));
    await driveClock(clock, { until: () => result !== undefined });
    expect(errors).toMatchObject([{ message: 'left while waiting' }, { message: 'left while following' }]);
    expect(result).toMatchObject({ status: 'finish', endedBy: 'finish' });
    expect(emulator.executions.list()).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });

  it('frees the key when the service refused the start, so the next run with it starts', async () => {
    const { clock, emulator, client } = await setup();
    emulator.faults.add({ kind: 'status', status: 400, endpoint: 'run', times: 1 });
    const [refused] = await runAll(clock, [client.run(CANVAS, {}, { idempotencyKey: 'k' })]);
    expect(refused?.error).toMatchObject({ code: 'INVALID_REQUEST' });
    // Past the service's duplicate-run window (service.md §2.2): an identical start within a second is refused.
    await driveClock(clock, { toTime: clock.now() + 1_500 });
    const [again, followed] = await runAll(clock, [client.run(CANVAS, {}, { idempotencyKey: 'k' }), client.run(CANVAS, {}, { idempotencyKey: 'k' })]);
    expect(resultOf(again!)).toMatchObject({ status: 'finish' });
    expect(resultOf(followed!)?.executionId).toBe(resultOf(again!)?.executionId);
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(2);
    expect(emulator.executions.list()).toHaveLength(1);
  });

  it('a start whose answer was lost leaves the key in doubt: later runs error with StartInDoubtError and start nothing', async () => {
    const { clock, emulator, client } = await setup();
    // The start is handled (its execution exists) and only the answer is lost.
    emulator.faults.add({ kind: 'drop', after: true, endpoint: 'run', times: 1 });
    const claimedAt = clock.now();
    const [lost] = await runAll(clock, [client.run(CANVAS, {}, { idempotencyKey: 'k', idempotencyTtlMs: TTL_MS })]);
    expect(lost?.error).toMatchObject({ code: 'NETWORK_ERROR' });
    const [doubted] = await runAll(clock, [client.run(CANVAS, {}, { idempotencyKey: 'k', idempotencyTtlMs: TTL_MS })]);
    expect(doubted?.error).toBeInstanceOf(StartInDoubtError);
    expect(isStartInDoubtError(doubted?.error)).toBe(true);
    expect(doubted?.error).toMatchObject({ code: 'START_IN_DOUBT', key: 'k', claimedAt });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    expect(emulator.executions.list()).toHaveLength(1);
  });

  it('startRun: a second handle with the key follows the first one’s execution', async () => {
    const { clock, emulator, client } = await setup();
    const first = client.startRun(CANVAS, {}, { idempotencyKey: 'k' });
    const second = client.startRun(CANVAS, {}, { idempotencyKey: 'k' });
    let results: RunResult[] | undefined;
    void Promise.all([first.result, second.result]).then((both) => (results = both));
    await driveClock(clock, { until: () => results !== undefined });
    expect(await second.executionId).toBe(await first.executionId);
    expect(results?.[1]).toMatchObject({ executionId: await first.executionId, canvasId: CANVAS, status: 'finish' });
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
  });

  it('refuses a key or a TTL that cannot be meant, before anything is sent', async () => {
    const { emulator, client } = await setup();
    await expect(lastValueFrom(client.run(CANVAS, {}, { idempotencyKey: '' }))).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lastValueFrom(client.run(CANVAS, {}, { idempotencyKey: 'k', idempotencyTtlMs: -1 }))).rejects.toThrow(/idempotencyTtlMs/u);
    await expect(lastValueFrom(client.run(CANVAS, {}, { idempotencyTtlMs: 1_000 }))).rejects.toThrow(/needs an idempotencyKey/u);
    expect(() => client.startRun(CANVAS, {}, { idempotencyKey: 'x'.repeat(257) })).toThrow(InvalidArgumentError);
    for (const idempotency of [{}, null, 'redis://127.0.0.1', { claim: () => undefined }]) {
      expect(() => createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, idempotency: idempotency as never })).toThrow(/Invalid idempotency: must be an idempotency store/u);
    }
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
  });

  it('errors with InvalidArgumentError, starting nothing, when a store of the user’s answers a claim that is none', async () => {
    const clock = createManualClock();
    const emulator = await createEmulator({ clock, listen: false, samples: false, rateLimit: false, workflows: [ONE_TASK] });
    open.push(emulator);
    const answers: unknown[] = [{ kind: 'later' }, { kind: 'in-doubt', claimedAt: Number.NaN }, { kind: 'follow' }, null];
    const store: IdempotencyStore = {
      claim: () => Promise.resolve(answers.shift() as IdempotencyClaim),
      record: () => Promise.resolve(),
      release: () => Promise.resolve(),
      abandon: () => Promise.resolve(),
    };
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: false, idempotency: store });
    const outcomes = await runAll(clock, [0, 1, 2, 3].map(() => client.run(CANVAS, {}, { idempotencyKey: 'k' })));
    for (const outcome of outcomes) {
      expect(outcome.error).toBeInstanceOf(InvalidArgumentError);
      expect(outcome.error).toMatchObject({ argument: 'idempotency' });
    }
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
  });
});
