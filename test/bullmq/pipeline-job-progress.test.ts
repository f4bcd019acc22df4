import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reportJobProgress } from '../../src/bullmq/job-progress-reporter.js';
import { initialJobProgress, jobProgressAfter, type PipelineJobProgress } from '../../src/bullmq/pipeline-job-progress.js';
import type { NodeStatus } from '../../src/domain/model.js';
import type { PipelineEvent } from '../../src/pipeline/pipeline-events.js';

const STATUSES: readonly NodeStatus[] = ['init', 'waiting', 'executing', 'finish', 'failed', 'unknown'];

/** The node events of one run: each node's statuses in order, one event per transition (the first without `previous`). */
function nodeEvents(paths: readonly (readonly NodeStatus[])[]): PipelineEvent<string>[] {
  return paths.flatMap((path, index) =>
    path.flatMap((status, at) => {
      const previous = path[at - 1];
      if (previous === status) return [];
      return [{ type: 'step' as const, step: 'only', event: { type: 'node' as const, executionId: 'we-1', nodeId: `node-${index}`, status, ...(previous === undefined ? {} : { previous }) } }];
    }),
  );
}

describe('a pipeline job\'s progress', () => {
  it('counts each node once, as done while it has ended and failed while it has failed, whatever its transitions', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.constantFrom(...STATUSES), { minLength: 1, maxLength: 6 }), { maxLength: 8 }), (paths) => {
        const progress = nodeEvents(paths).reduce(jobProgressAfter, initialJobProgress(['only'], { steps: {} }));
        const nodes = progress.steps['only']?.nodes;
        expect(nodes).toEqual({
          total: paths.length,
          done: paths.filter((path) => ['finish', 'failed'].includes(path.at(-1) ?? 'init')).length,
          failed: paths.filter((path) => path.at(-1) === 'failed').length,
        });
      }),
    );
  });

  it('starts counting nodes again for a new attempt of the step', () => {
    let progress = initialJobProgress(['only'], { steps: {} });
    progress = nodeEvents([['executing', 'failed']]).reduce(jobProgressAfter, jobProgressAfter(progress, { type: 'checkpoint', checkpoint: { steps: { only: { status: 'running', executionId: 'we-1' } } } }));
    expect(progress.steps['only']).toMatchObject({ state: 'running', nodes: { done: 1, failed: 1, total: 1 } });
    progress = jobProgressAfter(progress, { type: 'checkpoint', checkpoint: { steps: { only: { status: 'starting', attempt: 2 } } } });
    expect(progress.steps['only']).toEqual({ state: 'starting', nodes: { done: 0, failed: 0, total: 0 } });
  });

  it('writes one progress at a time to BullMQ and always the latest last, however many events come meanwhile', async () => {
    const written: PipelineJobProgress[] = [];
    let inFlight = 0;
    let most = 0;
    const job = {
      updateProgress: async (progress: PipelineJobProgress): Promise<void> => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        written.push(progress);
        inFlight -= 1;
      },
    };
    const reporter = reportJobProgress(job, initialJobProgress(['only'], { steps: {} }), () => undefined);
    const events = nodeEvents(Array.from({ length: 20 }, () => ['executing', 'finish'] as const));
    let expected = initialJobProgress(['only'], { steps: {} });
    for (const event of events) {
      reporter.event(event);
      expected = jobProgressAfter(expected, event);
    }
    await reporter.settled();
    expect(most).toBe(1);
    // The first write (the initial progress) was on its way during the burst: one more carries all of it.
    expect(written).toHaveLength(2);
    expect(written.at(-1)).toEqual(expected);
  });
});
