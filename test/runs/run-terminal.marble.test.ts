import type { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { FlowstreamError } from '../../src/errors/flowstream-error.js';
import { isWorkflowFailedError, WorkflowFailedError } from '../../src/errors/run-errors.js';
import type { NodeExecution, RunResult } from '../../src/domain/model.js';
import { runsOver } from '../../src/runs/runs.js';
import { CANVAS_ID, EXECUTION_ID, node, output, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 400 } };
const failedNode: NodeExecution = { ...node('n1', 'failed'), error: { message: 'Request timeout.', messages: ['Request timeout.'], raw: '["Request timeout."]' } };
const failedResult: RunResult = {
  executionId: EXECUTION_ID,
  canvasId: CANVAS_ID,
  status: 'failed',
  endedBy: 'failed',
  nodes: [failedNode, node('n2', 'init')],
  output: [],
  files: [],
  failedNodes: [failedNode],
  runningNodes: [],
};
const startedEvent = { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' };

function failingRun(cold: TestScheduler['createColdObservable'], failOnWorkflowError?: boolean) {
  const source = scriptedSource({
    start: () => cold('-(s|)', { s: started() }),
    // service.md §3.3–3.4: the execution fails at once; downstream stays init.
    status: () => cold('-(a|)', { a: snapshot('failed', [failedNode, node('n2', 'init')]) }),
    // Answers after 5 frames, so that the marble groups below line up.
    output: () => cold('-----(o|)', { o: output() }),
    abort: () => cold('(x|)'),
  });
  const options = failOnWorkflowError === undefined ? {} : { failOnWorkflowError };
  return { source, run$: runsOver(source, defaults).run(CANVAS_ID, {}, options) };
}

describe('how a run ends (virtual time)', () => {
  it('emits `finished` and then errors with WorkflowFailedError when the workflow failed, without aborting', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const { source, run$ } = failingRun(cold);
      expectObservable(run$).toBe(
        '-s 100ms (Sfi)(F#)',
        {
          s: startedEvent,
          S: { type: 'status', executionId: EXECUTION_ID, status: 'failed', previous: 'executing' },
          f: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'failed', error: failedNode.error },
          i: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n2', title: 'Title n2', status: 'init' },
          F: { type: 'finished', executionId: EXECUTION_ID, result: failedResult },
        },
        new WorkflowFailedError(failedResult),
      );
      flush();
      expect(source.calls.abort).toBe(0);
    });
  });

  it('completes after a failed `finished` with failOnWorkflowError: false', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const { run$ } = failingRun(cold, false);
      expectObservable(run$).toBe('-s 100ms (Sfi)(F|)', {
        s: startedEvent,
        S: { type: 'status', executionId: EXECUTION_ID, status: 'failed', previous: 'executing' },
        f: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'failed', error: failedNode.error },
        i: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n2', title: 'Title n2', status: 'init' },
        F: { type: 'finished', executionId: EXECUTION_ID, result: failedResult },
      });
    });
  });

  it('errors with the transport error, carrying the executionId, and leaves the execution running', () => {
    let caught: unknown;
    testScheduler().run(({ cold, flush }) => {
      const failure = new FlowstreamError('Network request failed', 'NETWORK_ERROR');
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold('-#', undefined, failure), abort: () => cold('(x|)') });
      runsOver(source, defaults)
        .run(CANVAS_ID)
        .subscribe({ error: (error: unknown) => (caught = error) });
      flush();
      expect(source.calls.abort).toBe(0);
      expect(caught).toBe(failure);
    });
    expect(caught).toMatchObject({ executionId: EXECUTION_ID, code: 'NETWORK_ERROR' });
  });

  it('errors with a failed start as it is, with no execution to abort', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const failure = new FlowstreamError('Duplicate request detected.', 'CONFLICT');
      const source = scriptedSource({ start: () => cold('-#', undefined, failure) });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID)).toBe('-#', undefined, failure);
    });
  });

  it('watches a finished execution to its result at once', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = scriptedSource({ status: () => cold('-(a|)', { a: snapshot('finish', [node('n1', 'finish')]) }), output: () => cold('----(o|)', { o: output() }) });
      const result: RunResult = { executionId: EXECUTION_ID, status: 'finish', endedBy: 'finish', nodes: [node('n1', 'finish')], output: [], files: [], failedNodes: [], runningNodes: [] };
      expectObservable(runsOver(source, defaults).watch(EXECUTION_ID)).toBe('-(sn)(F|)', {
        s: { type: 'started', executionId: EXECUTION_ID, status: 'finish' },
        n: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'finish' },
        F: { type: 'finished', executionId: EXECUTION_ID, result },
      });
    });
  });

  it('is cold: each subscription to `run` starts one execution', () => {
    testScheduler().run(({ cold, flush }) => {
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started('finish') }), status: () => cold('-(a|)', { a: snapshot('finish') }), output: () => cold('(o|)', { o: output() }) });
      const run$ = runsOver(source, defaults).run(CANVAS_ID);
      expect(source.calls.start).toBe(0);
      run$.subscribe();
      run$.subscribe();
      flush();
      expect(source.calls.start).toBe(2);
    });
  });

  it('is a WorkflowFailedError recognisable across realms', () => {
    expect(isWorkflowFailedError(new WorkflowFailedError(failedResult))).toBe(true);
  });
});
