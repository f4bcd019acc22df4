import { defer, map, NEVER, timer } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { FlowstreamError } from '../../src/errors/flowstream-error.js';
import { isWorkflowFailedError } from '../../src/errors/run-errors.js';
import type { ExecutionSnapshot, WorkflowPlan } from '../../src/domain/model.js';
import type { StartProgress } from '../../src/runs/run-lifecycle.js';
import { type RunHandle, runsOver } from '../../src/runs/runs.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, toRunState } from '../../src/runs/run-state.js';
import { CANVAS_ID, EXECUTION_ID, node, output, outputNode, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 100 } };
const start = node('start', 'finish', 'Start');
const abortedNode = { ...node('a', 'failed'), error: { message: 'Workflow aborted by user', messages: ['Workflow aborted by user'], raw: 'Workflow aborted by user' } };

type Cold = TestScheduler['createColdObservable'];

/**
 * An execution of one task `a` that runs until it is aborted (service.md §3.5: the abort fails every
 * unfinished node and the execution) or, with `finishAt`, finishes at that frame. Every status read is
 * recorded with its frame; the start answers after `startFrames` frames, or waits for ever.
 */
function execution(cold: Cold, now: () => number, options: { finishAt?: number; startFrames?: number } = {}) {
  let abortedAt: number | undefined;
  const reads: number[] = [];
  const current = (): ExecutionSnapshot => {
    if (abortedAt !== undefined) return snapshot('failed', [start, abortedNode]);
    if (options.finishAt !== undefined && now() >= options.finishAt) return snapshot('finish', [start, node('a', 'finish')]);
    return snapshot('executing', [start, node('a', 'executing')]);
  };
  const source = scriptedSource({
    start: () => (options.startFrames === undefined ? cold('-(s|)', { s: started() }) : cold(`${options.startFrames}ms (s|)`, { s: started() })),
    status: () =>
      defer(() => {
        reads.push(now());
        return cold('(a|)', { a: current() });
      }),
    output: () => defer(() => cold('(o|)', { o: output([outputNode('a', current().nodes[1]!.status)]) })),
    abort: () =>
      defer(() => {
        abortedAt = now();
        return cold('-(x|)', { x: undefined });
      }),
  });
  return { source, reads, abortedAt: () => abortedAt };
}

function collect(handle: RunHandle): { events: RunEvent[]; states: RunState[]; ended: string[] } {
  const seen = { events: [] as RunEvent[], states: [] as RunState[], ended: [] as string[] };
  handle.events.subscribe({ next: (event) => seen.events.push(event), complete: () => seen.ended.push('events complete'), error: () => seen.ended.push('events error') });
  handle.state.subscribe({ next: (state) => seen.states.push(state), complete: () => seen.ended.push('state complete'), error: () => seen.ended.push('state error') });
  return seen;
}

describe('startRun: a run handle', () => {
  it('starts at once and follows the run once for every subscriber; late ones get the state so far', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    const late: RunEvent[] = [];
    let first: ReturnType<typeof collect> | undefined;
    const lateStates: RunState[] = [];
    let source: ReturnType<typeof execution>['source'] | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now(), { finishAt: 250 });
      source = run.source;
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID, { variables: { topic: 'tides' } }, { output: 'final' });
      expect(run.source.calls.start).toBe(1);
      first = collect(handle);
      collect(handle);
      timer(150).subscribe(() => {
        handle!.events.subscribe((event) => late.push(event));
        handle!.events.pipe(toRunState()).subscribe((state) => lateStates.push(state));
      });
      flush();
      // One read per poll for the three subscribers: 101, 201, then 301 shows the end.
      expect(run.reads).toEqual([101, 201, 301]);
    });
    expect(source?.calls.abort).toBe(0);
    await expect(handle!.executionId).resolves.toBe(EXECUTION_ID);
    await expect(handle!.result).resolves.toMatchObject({ status: 'finish', endedBy: 'finish', executionId: EXECUTION_ID });
    // Joined at 150: the state of the read at 101 in one snapshot (no events made up), then what came after.
    expect(late.map((event) => `${event.type}${event.type === 'node' ? `:${event.nodeId}:${event.status}` : ''}`)).toEqual(['snapshot', 'status', 'node:a:finish', 'finished']);
    const [caught] = late;
    expect(caught?.type === 'snapshot' && caught.state.nodes.map((entry) => `${entry.nodeId}:${entry.status}`)).toEqual(['start:finish', 'a:executing']);
    // Every subscriber shares the run's readings: the late one's states are the very states the first saw.
    const shared = first?.states.slice(first.states.findIndex((state) => state.elapsedMs === 101)) ?? [];
    expect(lateStates).toHaveLength(shared.length);
    lateStates.forEach((state, index) => {
      expect(state).toBe(shared[index]);
    });
  });

  it('cancel() aborts once, reads the end at once, and resolves with endedBy: aborted — no error', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    let seen: ReturnType<typeof collect> | undefined;
    let cancelled: Promise<unknown> | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now());
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID);
      seen = collect(handle);
      timer(150).subscribe(() => {
        cancelled = handle!.cancel();
        void handle!.cancel();
      });
      flush();
      expect(run.source.calls.abort).toBe(1);
      // The abort answers at 151 and the end is read then, with the status (a streaming run would
      // otherwise read the output alone at 201, and the status only after that).
      expect(run.reads).toEqual([101, 151]);
    });
    const result = await cancelled;
    expect(result).toMatchObject({ status: 'failed', endedBy: 'aborted', failedNodes: [abortedNode] });
    await expect(handle!.result).resolves.toBe(result);
    expect(seen?.ended.sort()).toEqual(['events complete', 'state complete']);
    expect(seen?.states.at(-1)).toMatchObject({ status: 'failed', result: { endedBy: 'aborted' } });
  });

  it('cancel() shows at once: the states say cancelling from the call until the result', () => {
    const clock = testScheduler();
    const shown: string[] = [];
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now());
      const handle = runsOver(run.source, defaults).startRun(CANVAS_ID, {}, { output: 'final' });
      handle.state.subscribe((state) => shown.push(`${clock.now()} ${state.status ?? '-'}${state.cancelling === true ? ' cancelling' : ''}${state.result === undefined ? '' : ' result'}`));
      timer(150).subscribe(() => void handle.cancel());
      flush();
    });
    expect(shown).toEqual(['1 executing', '101 executing', '150 executing cancelling', '151 failed cancelling', '151 failed result']);
  });

  it('cancel() shows at once on sampled states too, and before the start answered', () => {
    const clock = testScheduler();
    const shown: string[] = [];
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now(), { startFrames: 20 });
      const handle = runsOver(run.source, defaults).startRun(CANVAS_ID, {}, { output: 'final', sampleStateMs: 1_000 });
      handle.state.subscribe((state) => shown.push(`${clock.now()} ${state.status ?? '-'}${state.cancelling === true ? ' cancelling' : ''}${state.result === undefined ? '' : ' result'}`));
      timer(5).subscribe(() => void handle.cancel());
      flush();
    });
    // Cancelled at 5, while the start is on its way: shown then, not when the start answers or a period ends.
    expect(shown[0]).toBe('5 - cancelling');
    expect(shown.at(-1)).toBe('21 failed result');
  });

  it('cancel(): a read waiting in the budget when the abort answers is asked again ahead of other runs', async () => {
    const clock = testScheduler();
    const asked: string[] = [];
    let cancelled: Promise<unknown> | undefined;
    clock.run(({ cold, flush }) => {
      let abortedAt: number | undefined;
      const current = (): ExecutionSnapshot => (abortedAt === undefined ? snapshot('executing', [start, node('a', 'executing')]) : snapshot('failed', [start, abortedNode]));
      // A read that is not urgent waits 500 frames in a saturated budget; an urgent one goes at once.
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => defer(() => (asked.push(`${clock.now()} status`), cold('500ms (a|)', { a: current() }))),
        output: () => defer(() => (asked.push(`${clock.now()} output`), cold('500ms (o|)', { o: output([outputNode('a', current().nodes[1]!.status)]) }))),
        abort: () => defer(() => ((abortedAt = clock.now()), cold('-(x|)', { x: undefined }))),
      });
      const urgentFirst = {
        ...source,
        status: (id: string, options?: { urgent?: boolean }) => (options?.urgent === true ? defer(() => (asked.push(`${clock.now()} status urgent`), cold('(a|)', { a: current() }))) : source.status(id, options)),
        output: (id: string, options?: { urgent?: boolean }) => (options?.urgent === true ? defer(() => (asked.push(`${clock.now()} output urgent`), cold('(o|)', { o: output([outputNode('a', current().nodes[1]!.status)]) }))) : source.output(id)),
      };
      const handle = runsOver(urgentFirst, defaults).startRun(CANVAS_ID, {}, { output: 'final' });
      timer(150).subscribe(() => {
        cancelled = handle.cancel();
      });
      flush();
    });
    // The end is read at the abort's answer (151), not after the read waiting since 101 (at 601).
    expect(asked).toEqual(['101 status', '151 status urgent', '151 output urgent']);
    await expect(cancelled).resolves.toMatchObject({ endedBy: 'aborted' });
  });

  it('cancel() drops a start not sent yet: its call is cancelled, nothing is sent, the result says aborted, executionId rejects', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    let seen: ReturnType<typeof collect> | undefined;
    const source = scriptedSource({ abort: () => NEVER, status: () => NEVER });
    clock.run(({ cold, expectSubscriptions, flush }) => {
      // Waits in the request budget: nothing of it is on its way (no `sending: true`).
      const queued$ = cold<StartProgress>('-');
      handle = runsOver({ ...source, start: () => queued$ }, defaults).startRun(CANVAS_ID);
      seen = collect(handle);
      timer(30).subscribe(() => void handle!.cancel());
      flush();
      expectSubscriptions(queued$.subscriptions).toBe('^ 29ms !');
    });
    expect(source.calls).toMatchObject({ abort: 0, status: 0 });
    await expect(handle!.result).resolves.toEqual({
      executionId: '',
      canvasId: CANVAS_ID,
      status: 'failed',
      endedBy: 'aborted',
      nodes: [],
      output: [],
      files: [],
      failedNodes: [],
      runningNodes: [],
    });
    await expect(handle!.executionId).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen?.states.at(-1)?.result?.endedBy).toBe('aborted');
    expect(seen?.ended.sort()).toEqual(['events complete', 'state complete']);
  });

  it('cancel() while checkVariables reads the plan cancels the read and sends no start', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    const source = scriptedSource({ start: () => NEVER });
    clock.run(({ cold, expectSubscriptions, flush }) => {
      const plan$ = cold<WorkflowPlan>('----(p|)', { p: { title: 'Plan', tasks: [], variables: [] } });
      handle = runsOver({ ...source, plan: () => plan$ }, defaults).startRun(CANVAS_ID, {}, { checkVariables: true });
      timer(2).subscribe(() => void handle!.cancel());
      flush();
      expectSubscriptions(plan$.subscriptions).toBe('^-!');
    });
    expect(source.calls.start).toBe(0);
    await expect(handle!.result).resolves.toMatchObject({ executionId: '', endedBy: 'aborted' });
  });

  it('cancel() during a start already sent aborts the execution as soon as its id arrives, and follows it to its end', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now(), { startFrames: 20 });
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID);
      timer(5).subscribe(() => void handle!.cancel());
      flush();
      expect(run.abortedAt()).toBe(20);
      expect(run.reads).toEqual([21]);
    });
    await expect(handle!.executionId).resolves.toBe(EXECUTION_ID);
    await expect(handle!.result).resolves.toMatchObject({ endedBy: 'aborted' });
  });

  it('timeoutMs aborts the execution and resolves with endedBy: timeout', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now());
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID, {}, { timeoutMs: 250 });
      flush();
      expect(run.abortedAt()).toBe(250);
      // The status at 101, the output alone at 201, the status again as soon as the abort answered.
      expect(run.reads).toEqual([101, 251]);
    });
    await expect(handle!.result).resolves.toMatchObject({ status: 'failed', endedBy: 'timeout' });
  });

  it('an aborted signal cancels like cancel()', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    const controller = new AbortController();
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now());
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID, {}, { signal: controller.signal });
      timer(120).subscribe(() => {
        controller.abort();
      });
      flush();
      expect(run.source.calls.abort).toBe(1);
    });
    await expect(handle!.result).resolves.toMatchObject({ endedBy: 'aborted' });
  });

  it('detach() stops following and aborts nothing; result rejects, events and state complete', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    let seen: ReturnType<typeof collect> | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now());
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID, {}, { timeoutMs: 500 });
      seen = collect(handle);
      timer(150).subscribe(() => {
        handle!.detach();
      });
      flush();
      expect(run.reads).toEqual([101]);
      expect(run.source.calls.abort).toBe(0);
    });
    await expect(handle!.executionId).resolves.toBe(EXECUTION_ID);
    await expect(handle!.result).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen?.ended.sort()).toEqual(['events complete', 'state complete']);
  });

  it('detach() during the start lets it through: the execution runs, its id is known, nothing is read', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now(), { startFrames: 20 });
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID);
      timer(5).subscribe(() => {
        handle!.detach();
      });
      flush();
      expect(run.reads).toEqual([]);
      expect(run.source.calls.abort).toBe(0);
    });
    await expect(handle!.executionId).resolves.toBe(EXECUTION_ID);
    await expect(handle!.result).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('RunOptions.detach leaves a run without touching its execution: it completes, nothing is aborted, nothing more is read', () => {
    const clock = testScheduler();
    clock.run(({ cold, expectObservable }) => {
      const run = execution(cold, () => clock.now());
      const leave = new AbortController();
      timer(150).subscribe(() => {
        leave.abort();
      });
      const types$ = runsOver(run.source, defaults).run(CANVAS_ID, {}, { detach: leave.signal }).pipe(map((event) => event.type));
      // started at 1, the status read at 101 shows the nodes (start done, a executing), then detach at 150: complete, no abort.
      expectObservable(types$).toBe('-s 99ms (nn) 45ms |', { s: 'started', n: 'node' });
      clock.flush();
      expect(run.reads).toEqual([101]);
      expect(run.source.calls.abort).toBe(0);
    });
  });

  it('RunOptions.detach during the start lets it through and completes after started, aborting nothing', () => {
    const clock = testScheduler();
    clock.run(({ cold, expectObservable }) => {
      const run = execution(cold, () => clock.now(), { startFrames: 20 });
      const leave = new AbortController();
      timer(5).subscribe(() => {
        leave.abort();
      });
      const types$ = runsOver(run.source, defaults).run(CANVAS_ID, {}, { detach: leave.signal }).pipe(map((event) => event.type));
      expectObservable(types$).toBe('20ms (s|)', { s: 'started' });
      clock.flush();
      expect(run.reads).toEqual([]);
      expect(run.source.calls.abort).toBe(0);
    });
  });

  it('cancel() after detach() aborts the execution left running, once', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now());
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID);
      timer(150).subscribe(() => {
        handle!.detach();
        void handle!.cancel();
        void handle!.cancel();
      });
      flush();
      expect(run.source.calls.abort).toBe(1);
    });
    await expect(handle!.result).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('cancel() after the end only returns the result', async () => {
    const clock = testScheduler();
    let handle: RunHandle | undefined;
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now(), { finishAt: 150 });
      handle = runsOver(run.source, defaults).startRun(CANVAS_ID);
      flush();
      expect(run.source.calls.abort).toBe(0);
    });
    await expect(handle!.cancel()).resolves.toMatchObject({ endedBy: 'finish' });
  });

  it('a failed workflow rejects the result with WorkflowFailedError; with failOnWorkflowError: false it resolves, endedBy: failed', async () => {
    const clock = testScheduler();
    const failing = (cold: Cold) =>
      scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => cold('(a|)', { a: snapshot('failed', [start, { ...node('a', 'failed'), error: { message: 'x', messages: ['x'], raw: 'x' } }]) }),
        output: () => cold('(o|)', { o: output() }),
      });
    const handles: RunHandle[] = [];
    clock.run(({ cold, flush }) => {
      handles.push(runsOver(failing(cold), defaults).startRun(CANVAS_ID));
      handles.push(runsOver(failing(cold), defaults).startRun(CANVAS_ID, {}, { failOnWorkflowError: false }));
      flush();
    });
    const error: unknown = await handles[0]!.result.catch((caught: unknown) => caught);
    expect(isWorkflowFailedError(error) && error.result.endedBy).toBe('failed');
    await expect(handles[1]!.result).resolves.toMatchObject({ endedBy: 'failed' });
  });

  it('after an error, a newcomer gets the state and the error, never a new execution; nothing rejects unhandled', async () => {
    const clock = testScheduler();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const failure = new FlowstreamError('Network request failed', 'NETWORK_ERROR');
    const late: string[] = [];
    let starts = 0;
    clock.run(({ cold, flush }) => {
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => (call === 0 ? cold('(a|)', { a: snapshot('executing', [start, node('a', 'executing')]) }) : cold('#', undefined, failure)),
      });
      // Never reads `result` nor `executionId`.
      const handle = runsOver(source, defaults).startRun(CANVAS_ID, {}, { output: 'final' });
      timer(300).subscribe(() => {
        handle.events.subscribe({ next: (event) => late.push(event.type), error: (error: unknown) => late.push(error === failure ? 'error' : 'other') });
        handle.state.subscribe({ next: (state) => late.push(`state ${state.progress.done}/${state.progress.total}`), error: () => late.push('state error') });
      });
      flush();
      starts = source.calls.start;
    });
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    expect(starts).toBe(1);
    expect(late).toEqual(['snapshot', 'error', 'state 0/1', 'state error']);
    expect(unhandled).toEqual([]);
  });

  it('samples its state with sampleStateMs, always delivering the final one', () => {
    const clock = testScheduler();
    const frames: number[] = [];
    clock.run(({ cold, flush }) => {
      const run = execution(cold, () => clock.now(), { finishAt: 350 });
      const handle = runsOver(run.source, defaults).startRun(CANVAS_ID, {}, { output: 'final', sampleStateMs: 250 });
      handle.state.subscribe(() => frames.push(clock.now()));
      flush();
    });
    // States at 1 (started), 101 (`a` executing) and twice at 401 (the status, then the result): the
    // first at once, 101 held to 251, the status at 401 held, the result at once.
    expect(frames).toEqual([1, 251, 401]);
  });

  it('refuses a bad option before anything is sent', () => {
    const source = scriptedSource({});
    expect(() => runsOver(source, defaults).startRun(CANVAS_ID, {}, { sampleStateMs: -1 })).toThrow(/sampleStateMs/);
    expect(() => runsOver(source, defaults).startRun(CANVAS_ID, {}, { timeoutMs: Number.NaN })).toThrow(/timeoutMs/);
    expect(source.calls.start).toBe(0);
  });
});
