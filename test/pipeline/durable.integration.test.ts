import { filter, firstValueFrom, lastValueFrom, shareReplay, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { isStepInDoubtError } from '../../src/errors/step-in-doubt-error.js';
import { createMemoryCheckpointStore, type CheckpointStoreEvent } from '../../src/pipeline/checkpoint-store.js';
import type { PipelineCheckpoint } from '../../src/pipeline/pipeline-checkpoint.js';
import type { PipelineDefinition } from '../../src/pipeline/pipeline-definition.js';
import type { PipelineEvent } from '../../src/pipeline/pipeline-events.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import { setup, task } from './harness.js';

type Step = 'first' | 'second';
const WORKFLOWS = [task('c-first', { durationMs: 2_000 }), task('c-second', { durationMs: 60_000 })];
const TWO_STEPS: PipelineDefinition<Step> = { steps: { first: { canvasId: 'c-first' }, second: { canvasId: 'c-second', dependsOn: ['first'] } } };

const starts = (emulator: { requests: { list(filter: { endpoint: 'run'; canvasId?: string }): readonly unknown[] } }, canvasId: string): number =>
  emulator.requests.list({ endpoint: 'run', canvasId }).length;

const checkpointWhen = (pipeline: ReturnType<typeof runPipeline<Step>>, test: (checkpoint: PipelineCheckpoint<Step>) => boolean): Promise<PipelineCheckpoint<Step>> =>
  firstValueFrom(pipeline.pipe(filter((event): event is Extract<PipelineEvent<Step>, { type: 'checkpoint' }> => event.type === 'checkpoint' && test(event.checkpoint)))).then((event) => event.checkpoint);

describe('pipelines that survive crashes and deploys', () => {
  it('records a step starting before its start leaves, then running with its execution', async () => {
    const { client } = await setup(WORKFLOWS, { rateLimit: false });
    const events = await lastValueFrom(runPipeline(client, TWO_STEPS).pipe(toArray()));
    const firstEntries = events.flatMap((event) => (event.type === 'checkpoint' ? [event.checkpoint.steps.first?.status] : [])).filter((status, index, all) => status !== all[index - 1]);
    expect(firstEntries).toEqual(['starting', 'running', 'finish']);
    const firstStep = events.find((event) => event.type === 'step' && event.step === 'first');
    // The `starting` checkpoint came before the run's first event.
    expect(events.findIndex((event) => event.type === 'checkpoint' && event.checkpoint.steps.first?.status === 'starting')).toBeLessThan(events.indexOf(firstStep!));
  });

  it("fails a step in doubt with StepInDoubtError naming it and its attempt, and starts nothing of it (inDoubt: 'fail')", async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const attemptedAt = Date.parse('2026-11-26T10:00:00Z');
    const resume: PipelineCheckpoint<Step> = { steps: { first: { status: 'starting', attempt: 1, attemptedAt } } };
    const error = await lastValueFrom(runPipeline(client, TWO_STEPS, { resume })).catch((caught: unknown) => caught);
    expect(isStepInDoubtError(error)).toBe(true);
    expect(error).toMatchObject({ step: 'first', attempt: 1, attemptedAt, code: 'STEP_IN_DOUBT' });
    expect(starts(emulator, 'c-first')).toBe(0);
    expect(starts(emulator, 'c-second')).toBe(0);
  });

  it("starts a step in doubt once more with inDoubt: 'start-again', as attempt 2", async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const resume: PipelineCheckpoint<Step> = { steps: { first: { status: 'starting', attempt: 1, attemptedAt: 0 } } };
    const events = await lastValueFrom(runPipeline(client, { steps: { first: TWO_STEPS.steps.first } } as PipelineDefinition<Step>, { resume, inDoubt: 'start-again' }).pipe(toArray()));
    expect(starts(emulator, 'c-first')).toBe(1);
    const last = events.filter((event) => event.type === 'checkpoint').at(-1);
    expect(last?.type === 'checkpoint' ? last.checkpoint.steps.first : undefined).toMatchObject({ status: 'finish', attempt: 2 });
  });

  it('detaches: aborts nothing, emits the last checkpoint, and another process resumes without starting any step twice', async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const leave = new AbortController();
    const pipeline = runPipeline(client, TWO_STEPS, { detach: leave.signal }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
    const all = lastValueFrom(pipeline.pipe(toArray()));
    await checkpointWhen(pipeline, (checkpoint) => checkpoint.steps.second?.status === 'running');
    leave.abort();
    const events = await all;
    const detached = events.at(-1);
    expect(detached?.type).toBe('detached');
    const saved = detached?.type === 'detached' ? detached.checkpoint : { steps: {} };
    expect(saved.steps.second).toMatchObject({ status: 'running' });
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(emulator.executions.get(saved.steps.second!.executionId!)?.status).toBe('executing');

    const resumed = await lastValueFrom(runPipeline(client, TWO_STEPS, { resume: JSON.parse(JSON.stringify(saved)) as PipelineCheckpoint<Step> }));
    expect(resumed.type).toBe('finished');
    expect(starts(emulator, 'c-first')).toBe(1);
    expect(starts(emulator, 'c-second')).toBe(1);
  });

  it('detaches with steps still waiting on a running one: they are left too, and the pipeline ends with detached', async () => {
    const { emulator, client } = await setup([...WORKFLOWS, task('c-third', { durationMs: 2_000 })], { rateLimit: false });
    const threeSteps: PipelineDefinition<Step | 'third'> = { steps: { ...TWO_STEPS.steps, third: { canvasId: 'c-third', dependsOn: ['second'] } } };
    const leave = new AbortController();
    const pipeline = runPipeline(client, threeSteps, { detach: leave.signal }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
    const all = lastValueFrom(pipeline.pipe(toArray()));
    await firstValueFrom(pipeline.pipe(filter((event) => event.type === 'checkpoint' && event.checkpoint.steps.second?.status === 'running')));
    leave.abort();
    const last = (await all).at(-1);
    expect(last).toMatchObject({ type: 'detached', checkpoint: { steps: { first: { status: 'finish' }, second: { status: 'running' } } } });
    expect(last?.type === 'detached' ? last.checkpoint.steps.third : 'none').toBeUndefined();
    expect(starts(emulator, 'c-third')).toBe(0);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
  });

  it('keeps the checkpoint in a store: the store knows a step is starting before its start leaves, and a cancel from anywhere aborts every running execution once', async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const store = createMemoryCheckpointStore();
    const seen: CheckpointStoreEvent[] = [];
    store.events('p-1').subscribe((event) => seen.push(event));
    const runsAtStarting: number[] = [];
    store.events('p-1').subscribe((event) => {
      if (event.type === 'step' && event.entry.status === 'starting') runsAtStarting.push(starts(emulator, event.step === 'first' ? 'c-first' : 'c-second'));
    });
    const pipeline = runPipeline(client, TWO_STEPS, { checkpoints: { store, pipelineId: 'p-1' } }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
    const all = lastValueFrom(pipeline.pipe(toArray()));
    const running = await checkpointWhen(pipeline, (checkpoint) => checkpoint.steps.second?.status === 'running');
    // Each start was on record while the service had seen none of it.
    expect(runsAtStarting).toEqual([0, 0]);
    await store.requestCancel('p-1');
    const events = await all;
    expect(events.at(-1)).toMatchObject({ type: 'finished', outcomes: { first: { status: 'finish' }, second: { status: 'aborted' } } });
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).map((request) => request.executionId)).toEqual([running.steps.second?.executionId]);
    expect((await store.load('p-1'))?.checkpoint.steps['second']).toMatchObject({ status: 'aborted' });
    expect(seen.some((event) => event.type === 'cancel')).toBe(true);
  });

  it('lets go of a stored pipeline another process claimed: it detaches, and the new lead resumes it, starting nothing twice', async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const store = createMemoryCheckpointStore();
    const first = runPipeline(client, TWO_STEPS, { checkpoints: { store, pipelineId: 'p-2' } }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
    const firstEvents = lastValueFrom(first.pipe(toArray()));
    await checkpointWhen(first, (checkpoint) => checkpoint.steps.first?.status === 'running');
    // A second process takes the lead and resumes from the store.
    const second = lastValueFrom(runPipeline(client, TWO_STEPS, { checkpoints: { store, pipelineId: 'p-2' } }).pipe(toArray()));
    const [before, after] = await Promise.all([firstEvents, second]);
    expect(before.at(-1)?.type).toBe('detached');
    expect(after.at(-1)).toMatchObject({ type: 'finished', outcomes: { first: { status: 'finish' }, second: { status: 'finish' } } });
    expect(starts(emulator, 'c-first')).toBe(1);
    expect(starts(emulator, 'c-second')).toBe(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
  });
});
