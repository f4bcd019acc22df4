import type { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { isWorkflowFailedError } from '../../src/errors/run-errors.js';
import { outputText } from '../../src/pipeline/output-text.js';
import type { PipelineDefinition } from '../../src/pipeline/pipeline-definition.js';
import type { PipelineEvent } from '../../src/pipeline/pipeline-events.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import { executionsOf, setup, task } from './harness.js';

type Step = 'fetch' | 'translate' | 'index' | 'publish' | 'report';

const WORKFLOWS = [
  task('c-fetch', { durationMs: 2_000, messages: [{ content: 'source text' }] }),
  task('c-translate', { durationMs: 3_000, failure: { kind: 'error', errors: ['Request timeout. Please try again later.'], atMs: 1_000 } }),
  task('c-index', { durationMs: 120_000, messages: [{ content: 'indexed' }] }),
  task('c-publish', { durationMs: 1_000 }),
  task('c-report', { durationMs: 1_000, messages: [{ content: 'report' }] }),
];

/** fetch → (translate → publish) and (index → report); translate fails while index still runs. */
const DAG: PipelineDefinition<Step> = {
  steps: {
    fetch: { canvasId: 'c-fetch' },
    translate: { canvasId: 'c-translate', dependsOn: ['fetch'], input: (results) => ({ variables: { text: outputText(results.fetch!) } }) },
    index: { canvasId: 'c-index', dependsOn: ['fetch'] },
    publish: { canvasId: 'c-publish', dependsOn: ['translate'] },
    report: { canvasId: 'c-report', dependsOn: ['index'] },
  },
};

/** Every event of a pipeline and how it ended: `undefined` when it completed, else its error. */
function collect(pipeline: Observable<PipelineEvent<Step>>): Promise<{ events: PipelineEvent<Step>[]; error: unknown }> {
  const events: PipelineEvent<Step>[] = [];
  return new Promise((resolve) => {
    pipeline.subscribe({
      next: (event) => events.push(event),
      error: (error: unknown) => {
        resolve({ events, error });
      },
      complete: () => {
        resolve({ events, error: undefined });
      },
    });
  });
}

describe('runPipeline: a DAG where one branch fails', () => {
  it('abort-all: aborts the running branch, starts nothing more, errors naming the failed step', async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const { events, error } = await collect(runPipeline(client, DAG, { onStepFailure: 'abort-all' }));
    expect(isWorkflowFailedError(error) && error.step).toBe('translate');
    const finished = events.at(-1);
    expect(finished?.type === 'finished' ? finished.outcomes : undefined).toMatchObject({
      fetch: { status: 'finish' },
      translate: { status: 'failed', error },
      index: { status: 'aborted' },
      publish: { status: 'skipped', blockedBy: 'translate' },
      report: { status: 'skipped', blockedBy: 'translate' },
    });
    const [index] = executionsOf(emulator, 'c-index');
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).map((record) => record.executionId)).toEqual([index?.executionId]);
    await expect.poll(() => emulator.executions.get(index!.executionId)?.status).toBe('failed');
    expect(executionsOf(emulator, 'c-publish')).toEqual([]);
    expect(executionsOf(emulator, 'c-report')).toEqual([]);
    expect(executionsOf(emulator, 'c-translate')[0]?.variables).toEqual([{ name: 'text', kind: 'text', value: 'source text' }]);
    const last = events.filter((event) => event.type === 'checkpoint').at(-1);
    expect(last?.type === 'checkpoint' ? last.checkpoint.steps.index : undefined).toMatchObject({ executionId: index?.executionId, status: 'aborted', attempt: 1 });
  });

  it('finish-running: the independent branch runs to its end, the dependants of the failure never start', async () => {
    const { emulator, client } = await setup(WORKFLOWS, { rateLimit: false });
    const { events, error } = await collect(runPipeline(client, DAG, { onStepFailure: 'finish-running' }));
    expect(isWorkflowFailedError(error) && error.step).toBe('translate');
    const finished = events.at(-1);
    expect(finished?.type === 'finished' ? finished.outcomes : undefined).toMatchObject({
      fetch: { status: 'finish' },
      translate: { status: 'failed', error },
      index: { status: 'finish' },
      publish: { status: 'skipped', blockedBy: 'translate' },
      report: { status: 'finish' },
    });
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
    expect(executionsOf(emulator, 'c-report')).toHaveLength(1);
    expect(executionsOf(emulator, 'c-publish')).toEqual([]);
    // The failure was seen long before the independent branch ended.
    const failedAt = events.findIndex((event) => event.type === 'step' && event.step === 'translate' && event.event.type === 'finished');
    const reportStartedAt = events.findIndex((event) => event.type === 'step' && event.step === 'report' && event.event.type === 'started');
    expect(failedAt).toBeGreaterThan(-1);
    expect(reportStartedAt).toBeGreaterThan(failedAt);
  });
});
