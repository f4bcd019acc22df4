import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cancelledResult, pipelineResult, pipelineStatus, type StepSummary } from '../../src/bullmq/pipeline-result.js';
import { isLaterEntry } from '../../src/bullmq/step-entry-order.js';
import { WorkflowFailedError } from '../../src/errors/run-errors.js';
import type { RunResult } from '../../src/domain/model.js';
import type { StepCheckpoint, StepCheckpointStatus } from '../../src/pipeline/pipeline-checkpoint.js';

const summaryStatus = fc.constantFrom<StepSummary['status']>('finish', 'failed', 'aborted', 'skipped');
const checkpointStatus = fc.constantFrom<StepCheckpointStatus>('starting', 'running', 'finish', 'failed', 'aborted');
const entry = fc.record({ status: checkpointStatus, attempt: fc.integer({ min: 1, max: 4 }) });

const result = (executionId: string, status: 'finish' | 'failed'): RunResult => ({ executionId, status, endedBy: status, nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] });

describe('a pipeline job’s result', () => {
  it('is failed when any step failed, else cancelled when any was aborted, else finish', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), summaryStatus, { minKeys: 1 }), (statuses) => {
        const steps = Object.fromEntries(Object.entries(statuses).map(([step, status]) => [step, { status }]));
        const all = Object.values(statuses);
        const expected = all.includes('failed') ? 'failed' : all.includes('aborted') ? 'cancelled' : 'finish';
        expect(pipelineStatus(steps)).toBe(expected);
      }),
    );
  });

  it('sums up each outcome with its execution and attempt from the last checkpoint, and the error as JSON', () => {
    const failure = new WorkflowFailedError(result('we-b', 'failed'), { step: 'b' });
    const summary = pipelineResult(
      'p-1',
      { a: { status: 'finish', result: result('we-a', 'finish') }, b: { status: 'failed', error: failure }, c: { status: 'skipped', blockedBy: 'b' } },
      { steps: { a: { status: 'finish', executionId: 'we-a', attempt: 1, attemptedAt: 5 }, b: { status: 'failed', executionId: 'we-b', attempt: 2, attemptedAt: 9 } } },
    );
    expect(summary).toEqual({
      pipelineId: 'p-1',
      status: 'failed',
      steps: {
        a: { status: 'finish', executionId: 'we-a', attempt: 1 },
        b: { status: 'failed', executionId: 'we-b', attempt: 2, error: { name: 'WorkflowFailedError', message: failure.message, code: failure.code } },
        c: { status: 'skipped', blockedBy: 'b' },
      },
    });
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
  });

  it('of a pipeline cancelled while no worker followed it: ends stay, running and unstarted steps are aborted, a step in doubt failed', () => {
    const summary = cancelledResult('p-2', ['a', 'b', 'c', 'd', 'e'], {
      steps: {
        a: { status: 'finish', executionId: 'we-a', attempt: 1 },
        b: { status: 'running', executionId: 'we-b', attempt: 1 },
        c: { status: 'starting', attempt: 2, attemptedAt: Date.parse('2026-11-26T10:00:00Z') },
        d: { status: 'failed', executionId: 'we-d', attempt: 1 },
      },
    });
    const inDoubtMessage = summary.steps['c']?.error?.message;
    expect(inDoubtMessage).toContain('Step c: its start (attempt 2, at 2026-11-26T10:00:00.000Z)');
    expect(summary.status).toBe('cancelled');
    expect(summary.steps).toEqual({
      a: { status: 'finish', executionId: 'we-a', attempt: 1 },
      b: { status: 'aborted', executionId: 'we-b', attempt: 1 },
      c: { status: 'failed', attempt: 2, error: { name: 'StepInDoubtError', code: 'STEP_IN_DOUBT', message: inDoubtMessage } },
      d: { status: 'failed', executionId: 'we-d', attempt: 1 },
      e: { status: 'aborted' },
    });
  });
});

describe('the order of a step’s entries (isLaterEntry)', () => {
  it('is a strict order: never later than itself, never both ways, and transitive', () => {
    fc.assert(
      fc.property(entry, entry, entry, (a, b, c) => {
        expect(isLaterEntry(a, a)).toBe(false);
        expect(isLaterEntry(a, b) && isLaterEntry(b, a)).toBe(false);
        if (isLaterEntry(a, b) && isLaterEntry(b, c)) expect(isLaterEntry(a, c)).toBe(true);
      }),
    );
  });

  it('follows a step through its life: each later start, and within one start starting, running, then its end', () => {
    const life: StepCheckpoint[] = [
      { status: 'starting', attempt: 1 },
      { status: 'running', executionId: 'we-1', attempt: 1 },
      { status: 'failed', executionId: 'we-1', attempt: 1 },
      { status: 'starting', attempt: 2 },
      { status: 'running', executionId: 'we-2', attempt: 2 },
      { status: 'finish', executionId: 'we-2', attempt: 2 },
    ];
    for (const [index, later] of life.entries()) {
      for (const earlier of life.slice(0, index)) expect(isLaterEntry(later, earlier)).toBe(true);
      for (const after of life.slice(index + 1)) expect(isLaterEntry(later, after)).toBe(false);
    }
    expect(isLaterEntry(life[0]!, undefined)).toBe(true);
  });
});
