import { share } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { NodeExecution } from '../../src/domain/model.js';
import { runsOver } from '../../src/runs/runs.js';
import type { RunEvent } from '../../src/runs/events.js';
import type { FailedBranches } from '../../src/runs/run-lifecycle.js';
import { type RunState, toRunState } from '../../src/runs/run-state.js';
import { CANVAS_ID, message, node, output, outputNode, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

// service.md §3.3: a failed node fails the execution at once while another branch goes on running.

const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 400 } };
const failedNode: NodeExecution = { ...node('n1', 'failed'), error: { message: 'Request timeout.', messages: ['Request timeout.'], raw: '["Request timeout."]' } };
const branch = node('n2', 'executing');

/** Failed with n2 still executing for `readsRunning` status reads, then n2 finished. */
function run(onFailedBranches: FailedBranches | undefined, readsRunning = 2) {
  const events: unknown[] = [];
  let source!: ReturnType<typeof scriptedSource>;
  testScheduler().run(({ cold, flush }) => {
    source = scriptedSource({
      start: () => cold('-(s|)', { s: started() }),
      status: (call) => cold('-(a|)', { a: snapshot('failed', [failedNode, call < readsRunning ? branch : node('n2', 'finish')]) }),
      output: () => cold('-(o|)', { o: output() }),
      abort: () => cold('-(x|)', { x: undefined }),
    });
    const options = { failOnWorkflowError: false, output: 'final' as const, ...(onFailedBranches === undefined ? {} : { onFailedBranches }) };
    runsOver(source, defaults).run(CANVAS_ID, {}, options).subscribe((event) => events.push(event));
    flush();
  });
  const finished = events.at(-1) as { type: string; result: { runningNodes: NodeExecution[]; nodes: NodeExecution[] } };
  return { events, finished, source };
}

describe('a failed execution with branches still running', () => {
  it('by default leaves them: the result names the nodes still running, and nothing is aborted', () => {
    const { finished, source } = run(undefined);
    expect(finished.type).toBe('finished');
    expect(finished.result.runningNodes.map((entry) => entry.nodeId)).toEqual(['n2']);
    expect(source.calls.abort).toBe(0);
    expect(source.calls.status).toBe(1);
  });

  it('with onFailedBranches: abort, aborts the execution once so they stop spending credits', () => {
    const { finished, source } = run('abort');
    expect(finished.result.runningNodes.map((entry) => entry.nodeId)).toEqual(['n2']);
    expect(source.calls.abort).toBe(1);
  });

  it('with onFailedBranches: follow, reads on until they end, then finishes with their last status', () => {
    const { events, finished, source } = run('follow', 3);
    expect(source.calls.status).toBe(4);
    // output: 'final' — read once, at the end: the failure is not the run's end while its branches run on.
    expect(source.calls.output).toBe(1);
    expect(source.calls.abort).toBe(0);
    expect(finished.result.runningNodes).toEqual([]);
    expect(finished.result.nodes.find((entry) => entry.nodeId === 'n2')?.status).toBe('finish');
    expect(events).toContainEqual(expect.objectContaining({ type: 'node', nodeId: 'n2', status: 'finish', previous: 'executing' }));
  });

  it('does not abort a failed execution that has nothing left running', () => {
    const { finished, source } = run('abort', 0);
    expect(finished.result.runningNodes).toEqual([]);
    expect(source.calls.abort).toBe(0);
  });
});

describe('the final output read, fresher than the status read before it', () => {
  /** The status reads `failed` with n2 executing; the output read just after shows n2 finished. */
  function finalRead() {
    const events: RunEvent[] = [];
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => cold('-(a|)', { a: snapshot('failed', [node('n0', 'finish'), failedNode, branch]) }),
        output: () => cold('-(o|)', { o: output([outputNode('n1', 'failed'), outputNode('n2', 'finish', [message('m1', 'branch done')])]) }),
      });
      const run$ = runsOver(source, defaults).run(CANVAS_ID, {}, { failOnWorkflowError: false, output: 'final' }).pipe(share());
      run$.subscribe((event) => events.push(event));
      run$.pipe(toRunState()).subscribe((state) => states.push(state));
      flush();
    });
    return { events, states };
  }

  it('moves the branch forward with its node event before finished, and the result says finish', () => {
    const { events } = finalRead();
    const finish = events.findIndex((event) => event.type === 'node' && event.nodeId === 'n2' && event.status === 'finish');
    const finished = events.findIndex((event) => event.type === 'finished');
    expect(finish).toBeGreaterThan(-1);
    expect(finish).toBeLessThan(finished);
    const result = (events[finished] as Extract<RunEvent, { type: 'finished' }>).result;
    expect(result.nodes.find((entry) => entry.nodeId === 'n2')?.status).toBe('finish');
    expect(result.runningNodes).toEqual([]);
  });

  it('shows the branch finished in the final state', () => {
    const { states } = finalRead();
    expect(states.at(-1)?.nodes.find((entry) => entry.nodeId === 'n2')?.status).toBe('finish');
  });
});
