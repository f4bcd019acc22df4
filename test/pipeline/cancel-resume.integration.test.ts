import { filter, firstValueFrom, lastValueFrom, map, type Observable, shareReplay, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import type { PipelineCheckpoint } from '../../src/pipeline/pipeline-checkpoint.js';
import type { PipelineDefinition } from '../../src/pipeline/pipeline-definition.js';
import type { PipelineEvent } from '../../src/pipeline/pipeline-events.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import { clientOf, executionsOf, setup, task } from './harness.js';

type Step = 'prepare' | 'left' | 'right' | 'merge';

const WORKFLOWS = [
  task('c-prepare', { durationMs: 1_000 }),
  task('c-left', { durationMs: 40_000, messages: [{ content: 'left' }] }),
  task('c-left-forever', { durationMs: 20 * 60_000 }),
  task('c-right', { durationMs: 1_000 }),
  task('c-merge', { durationMs: 1_000 }),
];

/** prepare → left (long) and right (short) → merge. */
const diamond = (left: string): PipelineDefinition<Step> => ({
  steps: {
    prepare: { canvasId: 'c-prepare' },
    left: { canvasId: left, dependsOn: ['prepare'] },
    right: { canvasId: 'c-right', dependsOn: ['prepare'] },
    merge: { canvasId: 'c-merge', dependsOn: ['left', 'right'] },
  },
});

/** The first checkpoint that satisfies `ready`. */
function checkpointWhen(events: Observable<PipelineEvent<Step>>, ready: (checkpoint: PipelineCheckpoint<Step>) => boolean): Promise<PipelineCheckpoint<Step>> {
  return firstValueFrom(
    events.pipe(
      filter((event) => event.type === 'checkpoint'),
      map((event) => event.checkpoint),
      filter(ready),
    ),
  );
}

const leftRunningRightDone = (checkpoint: PipelineCheckpoint<Step>): boolean => checkpoint.steps.left?.status === 'running' && checkpoint.steps.right?.status === 'finish';

function runsOf(emulator: Emulator, canvasId: string): number {
  return emulator.requests.list({ endpoint: 'run', canvasId }).length;
}

describe('runPipeline: cancellation and resuming', () => {
  it('aborts exactly the running executions when unsubscribed mid-pipeline, and starts nothing more', async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const pipeline = runPipeline(client, diamond('c-left-forever')).pipe(shareReplay({ bufferSize: 1, refCount: true }));
    const subscription = pipeline.subscribe();
    const checkpoint = await checkpointWhen(pipeline, leftRunningRightDone);
    subscription.unsubscribe();

    const left = checkpoint.steps.left!.executionId!;
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).map((record) => record.executionId)).toEqual([left]);
    await expect.poll(() => emulator.executions.get(left)?.status).toBe('failed');
    expect(emulator.executions.get(checkpoint.steps.prepare!.executionId!)?.status).toBe('finish');
    expect(emulator.executions.get(checkpoint.steps.right!.executionId!)?.status).toBe('finish');
    expect(executionsOf(emulator, 'c-merge')).toEqual([]);
    expect(emulator.executions.list()).toHaveLength(3);
  });

  it('resumes from a checkpoint taken mid-run: re-attaches with watch and starts no step twice', async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    // The first process: its connection to the service is cut when it "dies", so not even an abort gets out.
    let alive = true;
    const first = clientOf(emulator, (input, init) => (alive ? fetch(input, init) : Promise.reject(new TypeError('the process is gone'))));
    const pipeline = runPipeline(first, diamond('c-left')).pipe(shareReplay({ bufferSize: 1, refCount: true }));
    const subscription = pipeline.subscribe({ error: () => undefined });
    const saved = JSON.stringify(await checkpointWhen(pipeline, leftRunningRightDone));
    alive = false;
    subscription.unsubscribe();

    const resume = JSON.parse(saved) as PipelineCheckpoint<Step>;
    const left = resume.steps.left!.executionId!;
    expect(emulator.executions.get(left)?.status).toBe('executing');
    const events = await lastValueFrom(runPipeline(client, diamond('c-left'), { resume }).pipe(toArray()));

    const finished = events.at(-1);
    expect(finished?.type === 'finished' ? Object.values(finished.outcomes).map((outcome) => outcome.status) : []).toEqual(['finish', 'finish', 'finish', 'finish']);
    for (const canvasId of ['c-prepare', 'c-left', 'c-right', 'c-merge']) expect(runsOf(emulator, canvasId)).toBe(1);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(emulator.executions.get(left)?.status).toBe('finish');
    const checkpoint = events.filter((event) => event.type === 'checkpoint').at(-1);
    expect(checkpoint?.type === 'checkpoint' ? checkpoint.checkpoint.steps : undefined).toEqual({
      prepare: resume.steps.prepare,
      right: resume.steps.right,
      left: { ...resume.steps.left, executionId: left, status: 'finish' },
      merge: { executionId: executionsOf(emulator, 'c-merge')[0]?.executionId, status: 'finish', attempt: 1, attemptedAt: expect.any(Number) as unknown },
    });
  });
});
