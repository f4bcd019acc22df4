import { Observable, pipe, Subject, take } from 'rxjs';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { RunResult } from '../../src/domain/model.js';
import { type FileEvent, type MessageEvent, type NodeEvent, ofType, type RunEvent, runResult, toAsyncIterable } from '../../src/runs/events.js';
import { type RunState, RunStateFold, toRunState } from '../../src/runs/run-state.js';
import { shareRun } from '../../src/runs/run-hub.js';
import { runsOver } from '../../src/runs/runs.js';
import { CANVAS_ID, EXECUTION_ID, node, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

const id = EXECUTION_ID;
const result: RunResult = { executionId: id, canvasId: CANVAS_ID, status: 'finish', endedBy: 'finish', nodes: [node('n1', 'finish')], output: [], files: [], failedNodes: [], runningNodes: [] };
const file = { name: 'report.pdf', type: 'application/pdf', size: 3, nodeId: 'n1', url: 'https://x/v1/drive/file/public/df-1/report.pdf' };

const ev = {
  started: { type: 'started', executionId: id, canvasId: CANVAS_ID, status: 'executing' },
  n1: { type: 'node', executionId: id, nodeId: 'n1', title: 'Write', status: 'executing', previous: 'init' },
  n2: { type: 'node', executionId: id, nodeId: 'n2', title: 'Review', status: 'init' },
  m1: { type: 'message', executionId: id, nodeId: 'n1', messageId: 'm1', role: 'ai', delta: 'Hel', reasoningDelta: '', content: 'Hel', reasoningContent: '', replaced: false },
  m2: { type: 'message', executionId: id, nodeId: 'n1', messageId: 'm1', role: 'ai', delta: 'lo', reasoningDelta: '', content: 'Hello', reasoningContent: '', replaced: false },
  done: { type: 'node', executionId: id, nodeId: 'n1', title: 'Write', status: 'finish', previous: 'executing' },
  file: { type: 'file', executionId: id, file },
  finished: { type: 'finished', executionId: id, result },
} satisfies Record<string, RunEvent>;

describe('ofType', () => {
  it('keeps the events of the given types, narrowed', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events$ = cold<RunEvent>('abcd', { a: ev.started, b: ev.n1, c: ev.m1, d: ev.file });
      const picked$ = events$.pipe(ofType('node', 'file'));
      expectTypeOf(picked$).toEqualTypeOf<Observable<NodeEvent | FileEvent>>();
      expectObservable(picked$).toBe('-b-d', { b: ev.n1, d: ev.file });
      expectTypeOf(events$.pipe(ofType('message'))).toEqualTypeOf<Observable<MessageEvent>>();
    });
  });

  it('refuses, from JavaScript, a type that is not an event type or none at all, rather than keeping nothing', () => {
    const loose = ofType as (...types: unknown[]) => unknown;
    expect(() => loose('nodes')).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'types', message: expect.stringContaining("'nodes' is not an event type") as unknown }));
    expect(() => loose('node', 42)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'types' }));
    expect(() => loose()).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'types' }));
    expect(() => ofType('snapshot', 'connection', 'finished')).not.toThrow();
  });
});

describe('toRunState', () => {
  it('folds events into nodes in order with titles and text, files, progress and elapsed time', () => {
    const states: RunState[] = [];
    testScheduler().run(({ cold }) => {
      const events$ = cold<RunEvent>('a 9ms b c d e 9ms f g h', { a: ev.started, b: ev.n1, c: ev.n2, d: ev.m1, e: ev.m2, f: ev.done, g: ev.file, h: ev.finished });
      events$.pipe(toRunState()).subscribe((state) => states.push(state));
    });
    const last = states.at(-1)!;
    expect(states).toHaveLength(8);
    expect(last).toMatchObject({ executionId: id, canvasId: CANVAS_ID, status: 'finish', progress: { done: 1, total: 2 }, files: [file], result, elapsedMs: 25 });
    expect(last.nodes.map((entry) => [entry.nodeId, entry.title, entry.status, entry.text])).toEqual([
      ['n1', 'Write', 'finish', 'Hello'],
      ['n2', 'Review', 'init', ''],
    ]);
    expect(states[3]).toMatchObject({ progress: { done: 0, total: 2 }, elapsedMs: 12 });
    expect(states[3]!.nodes[0]!.text).toBe('Hel');
  });

  it('takes a rewritten message at its full new text', () => {
    const replaced: RunEvent = { ...ev.m2, delta: 'Bye', content: 'Bye', replaced: true };
    const states: RunState[] = [];
    new Observable<RunEvent>((subscriber) => {
      for (const event of [ev.started, ev.n1, ev.m1, replaced]) subscriber.next(event);
      subscriber.complete();
    })
      .pipe(toRunState())
      .subscribe((state) => states.push(state));
    expect(states.at(-1)!.nodes[0]!.text).toBe('Bye');
  });
});

describe('runResult', () => {
  it('resolves with the result of `finished`', async () => {
    const events$ = new Observable<RunEvent>((subscriber) => {
      subscriber.next(ev.started);
      subscriber.next(ev.finished);
      subscriber.complete();
    });
    await expect(runResult(events$)).resolves.toBe(result);
    await expect(pipe(runResult())(events$)).resolves.toBe(result);
  });

  it('rejects as the run errors', async () => {
    const failure = new Error('workflow failed');
    const events$ = new Observable<RunEvent>((subscriber) => {
      subscriber.next(ev.finished);
      subscriber.error(failure);
    });
    await expect(runResult(events$)).rejects.toBe(failure);
  });
});

/** The `snapshot` a late subscriber gets after `events`: the state they make, standing for them. */
function caughtUp(...events: RunEvent[]): RunEvent {
  const fold = new RunStateFold();
  for (const event of events) fold.apply(event);
  return { type: 'snapshot', executionId: id, state: fold.state };
}

describe('shareRun', () => {
  it('runs one execution for many subscribers and gives a late one its current state as one snapshot', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run$ = cold<RunEvent>('a b c d e 19ms f', { a: ev.started, b: ev.n1, c: ev.n2, d: ev.m1, e: ev.m2, f: ev.done });
      const shared$ = run$.pipe(shareRun());
      expectObservable(shared$, '^ 30ms !').toBe('a b c d e 19ms f', { a: ev.started, b: ev.n1, c: ev.n2, d: ev.m1, e: ev.m2, f: ev.done });
      // Joins at 10: the state so far in one `snapshot` (no events made up for it), then live events.
      expectObservable(shared$, '10ms ^ 30ms !').toBe('10ms S 13ms f', { S: caughtUp(ev.started, ev.n1, ev.n2, ev.m1, ev.m2), f: ev.done });
      // The run lives until the late subscriber, the last one, leaves at 41.
      expectSubscriptions(run$.subscriptions).toBe('^ 40ms !');
    });
  });

  it('unsubscribes from the run (and so aborts it) only when the last subscriber leaves', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run$ = cold<RunEvent>('a', { a: ev.started });
      const shared$ = run$.pipe(shareRun());
      expectObservable(shared$, '^ 5ms !').toBe('a', { a: ev.started });
      expectObservable(shared$, '2ms ^ 10ms !').toBe('2ms S', { S: caughtUp(ev.started) });
      expectSubscriptions(run$.subscriptions).toBe('^ 12ms !');
    });
  });

  it('aborts a shared run once, when its last subscriber leaves', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => cold('-(a|)', { a: snapshot('executing') }),
        abort: () => abort$,
      });
      const shared$ = runsOver(source, { random: () => 0.5, polling: { minMs: 100, maxMs: 400 } }).run(CANVAS_ID, {}, { output: 'final' }).pipe(shareRun());
      expectObservable(shared$, '^ 50ms !').toBe('-s', { s: ev.started });
      // The run's own state after its first reading, as it built it.
      const caught = { type: 'snapshot', executionId: EXECUTION_ID, state: expect.objectContaining({ executionId: EXECUTION_ID, status: 'executing', elapsedMs: 1 }) as unknown };
      expectObservable(shared$, '20ms ^ 200ms !').toBe('20ms S', { S: caught });
      expectSubscriptions(abort$.subscriptions).toBe('221ms ^!');
      flush();
      expect(source.calls.start).toBe(1);
    });
  });

  it('lets a late subscriber that only wants the snapshot leave without touching the run', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run$ = cold<RunEvent>('a', { a: ev.started });
      const shared$ = run$.pipe(shareRun());
      expectObservable(shared$, '^ 9ms !').toBe('a', { a: ev.started });
      expectObservable(shared$.pipe(take(1)), '3ms ^').toBe('3ms (S|)', { S: caughtUp(ev.started) });
      expectSubscriptions(run$.subscriptions).toBe('^ 9ms !');
    });
  });

  it('starts a new run for a subscriber that comes after the last one left', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run$ = cold<RunEvent>('a', { a: ev.started });
      const shared$ = run$.pipe(shareRun());
      expectObservable(shared$, '^ 3ms !').toBe('a', { a: ev.started });
      expectObservable(shared$, '5ms ^ 3ms !').toBe('5ms a', { a: ev.started });
      expectSubscriptions(run$.subscriptions).toBe(['^ 3ms !', '5ms ^ 3ms !']);
    });
  });

  it('gives a subscriber that comes after the run completed its final state, without starting the workflow again', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run$ = cold<RunEvent>('a b 2ms (f|)', { a: ev.started, b: ev.n1, f: ev.finished });
      const shared$ = run$.pipe(shareRun());
      expectObservable(shared$).toBe('a b 2ms (f|)', { a: ev.started, b: ev.n1, f: ev.finished });
      // The final state as a snapshot, then `finished` again: the stream still ends with it.
      expectObservable(shared$, '10ms ^').toBe('10ms (Sf|)', { S: caughtUp(ev.started, ev.n1, ev.finished), f: ev.finished });
      expectSubscriptions(run$.subscriptions).toBe('^ 3ms !');
    });
  });

  it('starts a new run for a subscriber that comes after the run was cut short before its result', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const run$ = cold<RunEvent>('a 2ms |', { a: ev.started });
      const shared$ = run$.pipe(shareRun());
      expectObservable(shared$).toBe('a 2ms |', { a: ev.started });
      expectObservable(shared$, '10ms ^').toBe('10ms a 2ms |', { a: ev.started });
      expectSubscriptions(run$.subscriptions).toBe(['^ 2ms !', '10ms ^ 2ms !']);
    });
  });

  it('starts a new run for a subscriber that comes after the run errored, so that retry() re-runs', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failure = new Error('service down');
      const run$ = cold<RunEvent>('a 2ms #', { a: ev.started }, failure);
      const shared$ = run$.pipe(shareRun());
      expectObservable(shared$).toBe('a 2ms #', { a: ev.started }, failure);
      expectObservable(shared$, '10ms ^').toBe('10ms a 2ms #', { a: ev.started }, failure);
      expectSubscriptions(run$.subscriptions).toBe(['^ 2ms !', '10ms ^ 2ms !']);
    });
  });

  it('passes the end of the run to every subscriber', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const shared$ = cold<RunEvent>('a 3ms (f|)', { a: ev.started, f: ev.finished }).pipe(shareRun());
      expectObservable(shared$).toBe('a 3ms (f|)', { a: ev.started, f: ev.finished });
      expectObservable(shared$, '2ms ^').toBe('2ms S 1ms (f|)', { S: caughtUp(ev.started), f: ev.finished });
    });
  });
});

describe('toAsyncIterable', () => {
  it('yields every event, then ends with the run', async () => {
    const seen: string[] = [];
    for await (const event of toAsyncIterable(
      new Observable<RunEvent>((subscriber) => {
        subscriber.next(ev.started);
        subscriber.next(ev.finished);
        subscriber.complete();
      }),
    )) {
      seen.push(event.type);
    }
    expect(seen).toEqual(['started', 'finished']);
  });

  it('throws the run’s error from the loop', async () => {
    const failure = new Error('network down');
    const iterate = async () => {
      for await (const event of toAsyncIterable(
        new Observable<RunEvent>((subscriber) => {
          subscriber.next(ev.started);
          subscriber.error(failure);
        }),
      )) {
        expect(event.type).toBe('started');
      }
    };
    await expect(iterate()).rejects.toBe(failure);
  });

  it('unsubscribes — and so aborts the run — on break', async () => {
    const teardown = vi.fn();
    const live = new Subject<RunEvent>();
    const events$ = new Observable<RunEvent>((subscriber) => {
      const inner = live.subscribe(subscriber);
      return () => {
        inner.unsubscribe();
        teardown();
      };
    });
    const iterating = (async () => {
      for await (const event of toAsyncIterable(events$)) {
        if (event.type === 'node') break;
      }
    })();
    await vi.waitFor(() => {
      expect(live.observed).toBe(true);
    });
    live.next(ev.started);
    live.next(ev.n1);
    await iterating;
    expect(teardown).toHaveBeenCalledTimes(1);
    expect(live.observed).toBe(false);
  });

  it('answers next() calls made without awaiting each, in order, then the end', async () => {
    const source = new Subject<number>();
    const iterator = toAsyncIterable(source)[Symbol.asyncIterator]();
    const first = iterator.next();
    const second = iterator.next();
    const third = iterator.next();
    source.next(1);
    source.next(2);
    source.complete();
    await expect(Promise.all([first, second, third])).resolves.toEqual([
      { done: false, value: 1 },
      { done: false, value: 2 },
      { done: true, value: undefined },
    ]);
  });

  it('settles every waiting next() with done when the loop is left', async () => {
    const source = new Subject<number>();
    const iterator = toAsyncIterable(source)[Symbol.asyncIterator]();
    const waiting = [iterator.next(), iterator.next()];
    await iterator.return?.();
    await expect(Promise.all(waiting)).resolves.toEqual([{ done: true, value: undefined }, { done: true, value: undefined }]);
    expect(source.observed).toBe(false);
  });

  it('does not subscribe until iterated', () => {
    const subscribe = vi.fn();
    toAsyncIterable(new Observable<RunEvent>(subscribe));
    expect(subscribe).not.toHaveBeenCalled();
  });
});
