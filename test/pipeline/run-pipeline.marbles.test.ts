import { defer, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '../../src/errors/run-errors.js';
import { outputText } from '../../src/pipeline/output-text.js';
import type { PipelineCheckpoint, StepCheckpoint } from '../../src/pipeline/pipeline-checkpoint.js';
import type { PipelineEvent } from '../../src/pipeline/pipeline-events.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import type { RunEvent } from '../../src/runs/events.js';
import { fakeClient, finishedEvent, resultOf, startedEvent, testScheduler } from './fake-client.js';

const run = (id: string, status: 'finish' | 'failed' = 'finish') => {
  const result = resultOf(id, { status, text: id });
  const s = startedEvent(id);
  const f = finishedEvent(result);
  return { s, f, result, values: { s, f } };
};

const step = (name: string, event: RunEvent): PipelineEvent<string> => ({ type: 'step', step: name, event });
const checkpoint = (steps: PipelineCheckpoint['steps']): PipelineEvent<string> => ({ type: 'checkpoint', checkpoint: { steps } });
/** A step's entry: its start's attempt and virtual time, and (once answered) its execution. */
const entry = (attempt: number, attemptedAt: number, executionId?: string, status: StepCheckpoint['status'] = 'starting'): StepCheckpoint =>
  executionId === undefined ? { status, attempt, attemptedAt } : { executionId, status, attempt, attemptedAt };

/** What a pipeline emitted, each with its virtual frame, and how it ended. */
interface Recording<Name extends string> {
  readonly events: (readonly [frame: number, event: PipelineEvent<Name>])[];
  end?: readonly [frame: number, error: unknown];
}

function record<Name extends string>(scheduler: TestScheduler, pipeline: Observable<PipelineEvent<Name>>, unsubscribeAt?: number): Recording<Name> {
  const recording: Recording<Name> = { events: [] };
  const subscription = pipeline.subscribe({
    next: (event) => recording.events.push([scheduler.now(), event]),
    error: (error: unknown) => {
      recording.end = [scheduler.now(), error];
    },
    complete: () => {
      recording.end = [scheduler.now(), undefined];
    },
  });
  if (unsubscribeAt !== undefined) scheduler.schedule(() => { subscription.unsubscribe(); }, unsubscribeAt);
  return recording;
}

describe('runPipeline in virtual time', () => {
  it('re-runs a failed step with its retry; the checkpoint follows the new execution; the dependant gets the result', () => {
    const a1 = run('we-a1', 'failed');
    const a2 = run('we-a2');
    const b = run('we-b');
    const scheduler = testScheduler();
    const { client, recording } = scheduler.run(({ cold }) => {
      let attempts = 0;
      const fake = fakeClient({
        run: (canvasId) =>
          canvasId === 'c-a'
            ? defer(() => (attempts++ === 0 ? cold<RunEvent>('s-f#', a1.values, new WorkflowFailedError(a1.result)) : cold<RunEvent>('s-(f|)', a2.values)))
            : cold<RunEvent>('s-(f|)', b.values),
      });
      const pipeline = runPipeline(fake, {
        steps: {
          a: { canvasId: 'c-a', retry: 1 },
          b: { canvasId: 'c-b', dependsOn: ['a'], input: (results) => ({ variables: { from: outputText(results.a!) } }) },
        },
      });
      return { client: fake, recording: record(scheduler, pipeline) };
    });
    expect(recording.events).toEqual([
      // Each start is on record (`starting`, its attempt and time) before it can leave.
      [0, checkpoint({ a: entry(1, 0) })],
      [0, checkpoint({ a: entry(1, 0, 'we-a1', 'running') })],
      [0, step('a', a1.s)],
      [2, checkpoint({ a: entry(1, 0, 'we-a1', 'failed') })],
      [2, step('a', a1.f)],
      [3, checkpoint({ a: entry(2, 3) })],
      [3, checkpoint({ a: entry(2, 3, 'we-a2', 'running') })],
      [3, step('a', a2.s)],
      [5, checkpoint({ a: entry(2, 3, 'we-a2', 'finish') })],
      [5, step('a', a2.f)],
      [5, checkpoint({ a: entry(2, 3, 'we-a2', 'finish'), b: entry(1, 5) })],
      [5, checkpoint({ a: entry(2, 3, 'we-a2', 'finish'), b: entry(1, 5, 'we-b', 'running') })],
      [5, step('b', b.s)],
      [7, checkpoint({ a: entry(2, 3, 'we-a2', 'finish'), b: entry(1, 5, 'we-b', 'finish') })],
      [7, step('b', b.f)],
      [7, { type: 'finished', outcomes: { a: { status: 'finish', result: a2.result }, b: { status: 'finish', result: b.result } } }],
    ]);
    expect(recording.end).toEqual([7, undefined]);
    expect(client.calls.map((call) => [call.target, call.input])).toEqual([
      ['c-a', {}],
      ['c-a', {}],
      ['c-b', { variables: { from: 'we-a2' } }],
    ]);
  });

  it('abort-all: unsubscribes the running sibling at the failure, skips the rest, ends with every outcome then the step-named error', () => {
    const a = run('we-a', 'failed');
    const b = run('we-b');
    const scheduler = testScheduler();
    const recording = scheduler.run(({ cold, expectSubscriptions }) => {
      const failing = cold<RunEvent>('s-f#', a.values, new WorkflowFailedError(a.result));
      const sibling = cold<RunEvent>('s------(f|)', b.values);
      const fake = fakeClient({ run: (canvasId) => (canvasId === 'c-a' ? failing : sibling) });
      const pipeline = runPipeline(fake, { steps: { a: { canvasId: 'c-a' }, b: { canvasId: 'c-b' }, c: { canvasId: 'c-c', dependsOn: ['b'] } } });
      expectSubscriptions(sibling.subscriptions).toBe('^--!');
      return record(scheduler, pipeline);
    });
    const [frame, error] = recording.end ?? [];
    expect(frame).toBe(3);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(error).toMatchObject({ step: 'a', result: a.result, message: expect.stringContaining('(step a)') as string });
    expect(recording.events.at(-2)).toEqual([3, checkpoint({ a: entry(1, 0, 'we-a', 'failed'), b: entry(1, 0, 'we-b', 'aborted') })]);
    expect(recording.events.at(-1)).toEqual([3, { type: 'finished', outcomes: { a: { status: 'failed', error }, b: { status: 'aborted' }, c: { status: 'skipped', blockedBy: 'a' } } }]);
  });

  it('finish-running: the independent branch runs on; the pipeline errors after its end', () => {
    const a = run('we-a', 'failed');
    const b = run('we-b');
    const scheduler = testScheduler();
    const recording = scheduler.run(({ cold, expectSubscriptions }) => {
      const sibling = cold<RunEvent>('s------(f|)', b.values);
      const fake = fakeClient({ run: (canvasId) => (canvasId === 'c-a' ? cold<RunEvent>('s-f#', a.values, new WorkflowFailedError(a.result)) : sibling) });
      const pipeline = runPipeline(fake, { steps: { a: { canvasId: 'c-a' }, b: { canvasId: 'c-b' } } }, { onStepFailure: 'finish-running' });
      expectSubscriptions(sibling.subscriptions).toBe('^------!');
      return record(scheduler, pipeline);
    });
    expect(recording.end?.[0]).toBe(7);
    expect(recording.events.at(-1)?.[1]).toMatchObject({ type: 'finished', outcomes: { a: { status: 'failed' }, b: { status: 'finish', result: b.result } } });
  });

  it('unsubscribing unsubscribes every running step and starts nothing more', () => {
    const a = run('we-a');
    const scheduler = testScheduler();
    const client = scheduler.run(({ cold, expectSubscriptions }) => {
      const left = cold<RunEvent>('s----(f|)', a.values);
      const right = cold<RunEvent>('s--------(f|)', a.values);
      const fake = fakeClient({ run: (canvasId) => (canvasId === 'c-a' ? left : right) });
      record(scheduler, runPipeline(fake, { steps: { a: { canvasId: 'c-a' }, b: { canvasId: 'c-b' }, c: { canvasId: 'c-c', dependsOn: ['a', 'b'] } } }), 2);
      expectSubscriptions(left.subscriptions).toBe('^-!');
      expectSubscriptions(right.subscriptions).toBe('^-!');
      return fake;
    });
    expect(client.calls.map((call) => call.target)).toEqual(['c-a', 'c-b']);
  });

  it('resumes: watches running and finished steps (owning them: abort on unsubscribe), re-runs failed and aborted ones', () => {
    const scheduler = testScheduler();
    const resume: PipelineCheckpoint = {
      steps: {
        done: { executionId: 'we-done', status: 'finish' },
        going: { executionId: 'we-going', status: 'running' },
        broken: { executionId: 'we-broken', status: 'failed' },
        stopped: { executionId: 'we-stopped', status: 'aborted' },
      },
    };
    const client = scheduler.run(({ cold }) => {
      const fake = fakeClient({
        watch: (executionId) => cold<RunEvent>('s-(f|)', run(executionId).values),
        run: (canvasId) => cold<RunEvent>('s-(f|)', run(`we-new-${canvasId}`).values),
      });
      const pipeline = runPipeline(
        fake,
        {
          steps: {
            done: { canvasId: 'c-done' },
            going: { canvasId: 'c-going', dependsOn: ['done'] },
            broken: { canvasId: 'c-broken', dependsOn: ['going'] },
            stopped: { canvasId: 'c-stopped' },
            fresh: { canvasId: 'c-fresh', dependsOn: ['broken'] },
          },
        },
        { resume, run: { output: 'final' } },
      );
      record(scheduler, pipeline);
      return fake;
    });
    expect(client.calls.map((call) => [call.kind, call.target])).toEqual([
      ['watch', 'we-done'],
      ['watch', 'we-going'],
      ['run', 'c-stopped'],
      ['run', 'c-broken'],
      ['run', 'c-fresh'],
    ]);
    // The pipeline owns the execution (abort on unsubscribe) and may leave it (detach).
    expect(client.calls[1]?.options).toEqual({ output: 'final', abortOnUnsubscribe: true, failOnWorkflowError: true, detach: expect.any(AbortSignal) as unknown });
  });

  it('refuses a checkpoint of another pipeline and a definition with a cycle, before anything runs', () => {
    const client = fakeClient({});
    expect(() => runPipeline(client, { steps: { a: { canvasId: 'c-a' } } }, { resume: { steps: { z: { executionId: 'we-z', status: 'running' } } } })).toThrow(/"z"/);
    expect(() => runPipeline(client, { steps: { a: { canvasId: 'c-a', dependsOn: ['a'] } } })).toThrow(/cycle/);
    expect(client.calls).toEqual([]);
  });

  it.each<[string, Parameters<typeof runPipeline>[2], string]>([
    // Plain JavaScript can pass anything; a misspelt policy must not quietly run as the other one.
    ['an unknown onStepFailure', { onStepFailure: 'abort' as 'abort-all' }, 'onStepFailure'],
    ['an unknown inDoubt', { inDoubt: 'retry' as 'fail' }, 'inDoubt'],
    ['a detach that is not an AbortSignal', { detach: new AbortController() as unknown as AbortSignal }, 'detach'],
    ['null options', null as unknown as undefined, 'options'],
    // A resume that cannot be read would otherwise read as nothing started: every step would start again.
    ['a resume that is not a checkpoint', { resume: 'we-a' as never }, 'resume'],
    ['a resume whose steps are not an object', { resume: { steps: 5 } as never }, 'resume'],
    ['a resume entry with a misspelt status', { resume: { steps: { a: { executionId: 'we-a', status: 'runing' } } } as never }, 'resume'],
    ['a resume entry that is only an execution id', { resume: { steps: { a: 'we-a' } } as never }, 'resume'],
  ])('refuses %s with InvalidArgumentError naming it, before anything runs', (_name, options, argument) => {
    const client = fakeClient({});
    expect(() => runPipeline(client, { steps: { a: { canvasId: 'c-a' } } }, options)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
    expect(client.calls).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    // From JavaScript: a misspelt dependsOn would start the step at once, beside the steps it was to follow.
    ['a misspelt step field', { steps: { a: { canvasId: 'c-a' }, b: { canvasId: 'c-b', dependOn: ['a'] } } }, 'steps.b.dependOn'],
    ['a dependsOn that is a string', { steps: { a: { canvasId: 'c-a' }, b: { canvasId: 'c-b', dependsOn: 'a' } } }, 'steps.b.dependsOn'],
    ['a step without a canvasId', { steps: { a: {} } }, 'steps.a.canvasId'],
    ['a step that is not an object', { steps: { a: 'c-a' } }, 'steps.a'],
    ['an input that is not a function', { steps: { a: { canvasId: 'c-a', input: { variables: {} } } } }, 'steps.a.input'],
    ['steps that are not an object', { steps: null }, 'steps'],
    ['a null definition', null, 'definition'],
  ])('refuses %s with InvalidArgumentError naming it, before anything runs', (_name, definition, argument) => {
    const client = fakeClient({});
    expect(() => runPipeline(client, definition as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
    expect(client.calls).toEqual([]);
  });

  it('a step whose input throws fails without starting; its dependants are skipped, and with abort-all every other step', () => {
    const scheduler = testScheduler();
    const problem = new Error('no such file');
    const { client, recording } = scheduler.run(() => {
      const fake = fakeClient({});
      const pipeline = runPipeline(fake, {
        steps: {
          a: {
            canvasId: 'c-a',
            input: () => {
              throw problem;
            },
          },
          b: { canvasId: 'c-b', dependsOn: ['a'] },
          c: { canvasId: 'c-c' },
        },
      });
      return { client: fake, recording: record(scheduler, pipeline) };
    });
    // abort-all: the independent step c, ready at the same moment as a, is not started either.
    expect(recording.events).toEqual([
      [0, { type: 'finished', outcomes: { a: { status: 'failed', error: problem }, b: { status: 'skipped', blockedBy: 'a' }, c: { status: 'skipped', blockedBy: 'a' } } }],
    ]);
    expect(recording.end).toEqual([0, problem]);
    expect(client.calls).toEqual([]);
  });

  it('fails a step whose run completed without a result', () => {
    const scheduler = testScheduler();
    const recording = scheduler.run(({ cold }) => record(scheduler, runPipeline(fakeClient({ run: () => cold<RunEvent>('s|', run('we-a').values) }), { steps: { a: { canvasId: 'c-a' } } })));
    expect(recording.end?.[1]).toEqual(new Error('step a completed without a finished event'));
  });
});
