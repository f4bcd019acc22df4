import { map, take } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ExecutionOutput, RunResult, WorkflowPlan } from '../../src/domain/model.js';
import { runsOver } from '../../src/runs/runs.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, sampleRunState, toRunState } from '../../src/runs/run-state.js';
import { CANVAS_ID, EXECUTION_ID, message, node, output, outputNode, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 100 } };
const start = node('start', 'finish', 'Start');

/** What a display reads of a state: status, progress and each node's status. */
function shown(state: RunState): string {
  const nodes = state.nodes.map((entry) => `${entry.nodeId}:${entry.status}`).join(' ');
  return `${state.status ?? '-'} ${state.progress.done}/${state.progress.total} [${nodes}]${state.result === undefined ? '' : ' result'}`;
}

/**
 * A run of two tasks after the start node: each status read below is one poll, every 100 ms after the
 * start answered at 1 (`output: 'final'`, so the output is read once, at the end).
 */
function twoTaskRun(finalOutput: ExecutionOutput = output([outputNode('a', 'finish'), outputNode('b', 'finish')])) {
  const readings = [
    snapshot('executing', [start, node('a', 'executing'), node('b', 'init')]),
    snapshot('executing', [start, node('a', 'finish'), node('b', 'executing')]),
    snapshot('finish', [start, node('a', 'finish'), node('b', 'finish')]),
  ];
  return (cold: Parameters<Parameters<ReturnType<typeof testScheduler>['run']>[0]>[0]['cold']) =>
    scriptedSource({
      start: () => cold('-(s|)', { s: started() }),
      status: (call) => cold('(a|)', { a: readings[Math.min(call, readings.length - 1)]! }),
      output: () => cold('(o|)', { o: finalOutput }),
    });
}

describe('toRunState: one state per poll', () => {
  it('never shows a state the service did not: no `finish` while a node executes, no 100 % while the first task runs', () => {
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      runsOver(twoTaskRun()(cold), defaults).run(CANVAS_ID, {}, { output: 'final' }).pipe(toRunState()).subscribe((state) => states.push(state));
      flush();
    });
    expect(states.map(shown)).toEqual([
      'executing 0/0 []',
      'executing 0/2 [start:finish a:executing b:init]',
      'executing 1/2 [start:finish a:finish b:executing]',
      'finish 2/2 [start:finish a:finish b:finish]',
      'finish 2/2 [start:finish a:finish b:finish] result',
    ]);
  });

  it('counts failed and aborted tasks apart from those that succeeded: an aborted run is not a full bar', () => {
    const aborted = { ...node('b', 'failed'), error: { message: 'Workflow aborted by user', messages: ['Workflow aborted by user'], raw: 'Workflow aborted by user' } };
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => cold('(a|)', { a: snapshot('failed', [start, node('a', 'finish'), aborted, node('c', 'init')]) }),
        output: () => cold('(o|)', { o: output([outputNode('a', 'finish'), { ...outputNode('b', 'failed'), error: aborted.error }, outputNode('c', 'init')]) }),
      });
      runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final', failOnWorkflowError: false }).pipe(toRunState()).subscribe((state) => states.push(state));
      flush();
    });
    expect(states.at(-1)?.progress).toEqual({ succeeded: 1, failed: 1, done: 2, total: 3 });
  });

  it('counts progress over task nodes only: a fresh run reads 0 %, not 25 %, before any work', () => {
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => cold('(a|)', { a: snapshot('executing', [start, node('a', 'init'), node('b', 'init'), node('c', 'init')]) }),
        abort: () => cold('(x|)', { x: undefined }),
      });
      runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' }).pipe(toRunState(), take(2)).subscribe((state) => states.push(state));
      flush();
    });
    expect(states[1]?.progress).toEqual({ succeeded: 0, failed: 0, done: 0, total: 3 });
    expect(states[1]?.nodes.map((entry) => [entry.nodeId, entry.task])).toEqual([
      ['start', false],
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
  });

  it('takes the total from the first output read, and never grows it mid-run', () => {
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      // `c` did its work before the first read (first seen `finish`, service.md §3.2) and wrote nothing;
      // `doc` is a content node (`init`, then `finish` a tick after its parent), which the output never lists.
      const reads = [
        snapshot('executing', [start, node('a', 'executing'), node('c', 'finish'), node('doc', 'init')]),
        snapshot('executing', [start, node('a', 'finish'), node('c', 'finish'), node('doc', 'init')]),
        snapshot('finish', [start, node('a', 'finish'), node('c', 'finish'), node('doc', 'finish')]),
      ];
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => cold('(a|)', { a: reads[Math.min(call, reads.length - 1)]! }),
        output: () => cold('(o|)', { o: output([outputNode('a', 'executing', [message('m1', 'Working')]), outputNode('c', 'finish')]) }),
      });
      runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'stream' }).pipe(toRunState()).subscribe((state) => states.push(state));
      flush();
    });
    const firstOutput = states.findIndex((state) => state.nodes.some((entry) => entry.text === 'Working'));
    expect(firstOutput).toBeGreaterThan(0);
    // From the first output read on, the tasks are `a` and `c`: the total is 2 until the end.
    expect(states.slice(firstOutput).map((state) => state.progress.total)).toEqual(states.slice(firstOutput).map(() => 2));
    expect(states.at(-1)?.progress).toEqual({ succeeded: 2, failed: 0, done: 2, total: 2 });
    expect(states.at(-1)?.nodes.map((entry) => [entry.nodeId, entry.task])).toEqual([
      ['start', false],
      ['a', true],
      ['c', true],
      ['doc', false],
    ]);
  });

  it('has the total from the start when the run read the plan (checkVariables), the same to the end', () => {
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      const task = (id: string) => ({ id, title: id, prompt: '', toolsets: [], dependentTasks: [] });
      const plan: WorkflowPlan = { title: 'Two tasks', tasks: [task('a'), task('b')], variables: [] };
      // `a` ran its whole life before the first read: before, it counted only once the result came.
      const reads = [snapshot('executing', [start, node('a', 'finish'), node('b', 'executing')]), snapshot('finish', [start, node('a', 'finish'), node('b', 'finish')])];
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => cold('(a|)', { a: reads[Math.min(call, reads.length - 1)]! }),
        output: () => cold('(o|)', { o: output([outputNode('a', 'finish'), outputNode('b', 'finish')]) }),
      });
      runsOver({ ...source, plan: () => cold('-(p|)', { p: plan }) }, defaults)
        .run(CANVAS_ID, {}, { output: 'final', checkVariables: true })
        .pipe(toRunState())
        .subscribe((state) => states.push(state));
      flush();
    });
    expect(states.map((state) => `${state.progress.succeeded}/${state.progress.total}`)).toEqual(['0/2', '1/2', '2/2', '2/2']);
  });

  it('takes the task nodes from the result at the end, also a task first seen done', () => {
    const quick: RunEvent[] = [
      { type: 'started', executionId: EXECUTION_ID, status: 'executing' },
      { type: 'node', executionId: EXECUTION_ID, nodeId: 'start', status: 'finish' },
      { type: 'node', executionId: EXECUTION_ID, nodeId: 'a', status: 'finish' },
    ];
    const result: RunResult = {
      executionId: EXECUTION_ID,
      status: 'finish',
      endedBy: 'finish',
      nodes: [start, node('a', 'finish')],
      output: [outputNode('a', 'finish')],
      files: [],
      failedNodes: [],
      runningNodes: [],
    };
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      cold<RunEvent>('(abc) 5ms (d|)', { a: quick[0]!, b: quick[1]!, c: quick[2]!, d: { type: 'finished', executionId: EXECUTION_ID, result } })
        .pipe(toRunState())
        .subscribe((state) => states.push(state));
      flush();
    });
    // Before the result, `a` looks like a node with no work: progress is never above the real one.
    expect(states.map((state) => state.progress)).toEqual([
      { succeeded: 0, failed: 0, done: 0, total: 0 },
      { succeeded: 1, failed: 0, done: 1, total: 1 },
    ]);
  });
});

describe('toRunState: elapsed times on the scheduler', () => {
  it('times a node from when it was seen executing to when it was seen done, and the run from subscription', () => {
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      runsOver(twoTaskRun()(cold), defaults).run(CANVAS_ID, {}, { output: 'final' }).pipe(toRunState()).subscribe((state) => states.push(state));
      flush();
    });
    // Polls at 101, 201 and 301: `a` seen executing at 101 and done at 201; `b` executing at 201.
    const elapsed = states.map((state) => [state.elapsedMs, ...state.nodes.map((entry) => entry.elapsedMs ?? '-')]);
    expect(elapsed).toEqual([
      [1],
      [101, '-', 0, '-'],
      [201, '-', 100, 0],
      [301, '-', 100, 100],
      [301, '-', 100, 100],
    ]);
  });

  it("prefers the service's start and end times of the result's output (service.md §4.2)", () => {
    const timed = output([
      { ...outputNode('a', 'finish'), startTime: '2025-01-01T00:00:00.000Z', endTime: '2025-01-01T00:00:42.500Z' },
      { ...outputNode('b', 'finish'), startTime: 'not a time', endTime: '2025-01-01T00:01:00.000Z' },
    ]);
    const states: RunState[] = [];
    testScheduler().run(({ cold, flush }) => {
      runsOver(twoTaskRun(timed)(cold), defaults).run(CANVAS_ID, {}, { output: 'final' }).pipe(toRunState()).subscribe((state) => states.push(state));
      flush();
    });
    expect(states.at(-1)?.nodes.map((entry) => entry.elapsedMs)).toEqual([undefined, 42_500, 100]);
  });
});

describe('sampling states for a display on a timer', () => {
  const state = (progress: number, result?: RunResult): RunState => ({
    nodes: [],
    files: [],
    progress: { succeeded: progress, failed: 0, done: progress, total: 9 },
    elapsedMs: 0,
    ...(result === undefined ? {} : { result }),
  });
  const result = { executionId: EXECUTION_ID, status: 'finish', endedBy: 'finish', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] } satisfies RunResult;

  it('emits the first state at once, then the latest once per period, and the final one at once', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const states = { a: state(1), b: state(2), c: state(3), d: state(4), e: state(5), f: state(6, result) };
      const source = cold<RunState>('a 2ms b 2ms c 10ms d e 3ms f 5ms |', states);
      // a at 0 opens a 5 ms period; b (held) goes out when it ends, at 5, and c at 10; the period
      // from 10 ends empty; d at 17 goes out at once; e is held, but f, the final state, goes out as
      // it comes, at 22, in place of e.
      expectObservable(source.pipe(sampleRunState(5))).toBe('a 4ms b 4ms c 6ms d 4ms f 5ms |', states);
    });
  });

  it('delivers a held state before the run completes or errors', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const states = { a: state(1), b: state(2) };
      expectObservable(cold<RunState>('a b |', states).pipe(sampleRunState(50))).toBe('a - (b|)', states);
      expectObservable(cold<RunState>('a b #', states).pipe(sampleRunState(50))).toBe('a - (b#)', states);
    });
  });

  it('is an option of toRunState, on its scheduler, and leaves no timer behind', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold<RunEvent>('a 1ms b 1ms c 20ms |', {
        a: { type: 'started', executionId: EXECUTION_ID, status: 'executing' },
        b: { type: 'node', executionId: EXECUTION_ID, nodeId: 'a', status: 'executing' },
        c: { type: 'message', executionId: EXECUTION_ID, nodeId: 'a', messageId: 'm', role: 'ai', delta: 'Hi', reasoningDelta: '', content: 'Hi', reasoningContent: '', replaced: false },
      });
      const texts = events.pipe(toRunState({ sampleMs: 10 }));
      const text = map((state: RunState) => state.nodes.map((entry) => `${entry.nodeId}:${entry.text}`).join(' '));
      expectObservable(texts.pipe(text)).toBe('x 9ms y 14ms |', { x: '', y: 'a:Hi' });
      expectSubscriptions(events.subscriptions).toBe('^ 24ms !');
    });
  });

  it('refuses a period that is not a positive number of ms', () => {
    expect(() => toRunState({ sampleMs: 0 })).toThrow(/sampleMs/);
    expect(() => sampleRunState(Number.NaN)).toThrow(/sampleMs/);
  });
});

