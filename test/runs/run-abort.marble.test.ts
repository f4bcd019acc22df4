import { concat, of, takeWhile } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { RunTimeoutError } from '../../src/errors/run-errors.js';
import { NotFoundError } from '../../src/errors/api-errors.js';
import { NetworkError } from '../../src/errors/transport-errors.js';
import type { WorkflowPlan } from '../../src/domain/model.js';
import { runsOver } from '../../src/runs/runs.js';
import type { StartProgress } from '../../src/runs/run-lifecycle.js';
import { CANVAS_ID, EXECUTION_ID, node, output, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 400 } };
const executing = snapshot('executing', [node('n1', 'executing')]);
const startedEvent = { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' };
const nodeEvent = { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'executing' };

function transient(message: string): NetworkError {
  return new NetworkError({ endpoint: 'abort', cause: new Error(message) });
}

describe('abort on unsubscribe (virtual time)', () => {
  it('aborts the execution once when unsubscribed mid-run', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const status$ = cold('-(a|)', { a: executing });
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => status$, abort: () => abort$ });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' }), '150ms !').toBe('-s 100ms n', { s: startedEvent, n: nodeEvent });
      expectSubscriptions(status$.subscriptions).toBe('101ms ^!');
      expectSubscriptions(abort$.subscriptions).toBe('150ms ^!');
    });
  });

  it('lets the start finish when unsubscribed during it, then aborts once the id arrives, emitting nothing', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const start$ = cold('---(s|)', { s: started() });
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({ start: () => start$, abort: () => abort$ });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID), '-!').toBe('');
      expectSubscriptions(start$.subscriptions).toBe('^--!');
      expectSubscriptions(abort$.subscriptions).toBe('---^!');
      flush();
      expect(source.calls).toEqual({ start: 1, status: 0, output: 0, abort: 1 });
    });
  });

  it('cancels the start instead when abortOnUnsubscribe is false', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const start$ = cold('---(s|)', { s: started() });
      const source = scriptedSource({ start: () => start$ });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { abortOnUnsubscribe: false }), '-!').toBe('');
      expectSubscriptions(start$.subscriptions).toBe('^!');
    });
  });

  it('sends no start when unsubscribed while checkVariables reads the plan: nothing of it is on its way', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const plan$ = cold<WorkflowPlan>('----(p|)', { p: { title: 'Plan', tasks: [], variables: [] } });
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }) });
      expectObservable(runsOver({ ...source, plan: () => plan$ }, defaults).run(CANVAS_ID, {}, { checkVariables: true }), '--!').toBe('');
      expectSubscriptions(plan$.subscriptions).toBe('^-!');
      flush();
      expect(source.calls).toEqual({ start: 0, status: 0, output: 0, abort: 0 });
    });
  });

  it('keeps a start on its way when unsubscribed, and lets it go once its attempt failed with nothing on its way: no execution, nothing aborted', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      // Sent at 0, the attempt fails at 2 (a 429: nothing started), sent again at 10, answered at 11.
      const start$ = cold<StartProgress>('--f 7ms t(s|)', { f: { type: 'sending', sending: false }, t: { type: 'sending', sending: true }, s: { type: 'started', execution: started() } });
      const source = scriptedSource({ abort: () => cold('(x|)') });
      const sending = { type: 'sending', sending: true } as const;
      expectObservable(runsOver({ ...source, start: () => concat(of(sending), start$) }, defaults).run(CANVAS_ID), '-!').toBe('');
      expectSubscriptions(start$.subscriptions).toBe('^-!');
      flush();
      expect(source.calls.abort).toBe(0);
    });
  });

  it('never aborts a run that already finished, even when the subscriber leaves on `finished`', () => {
    const seen: string[] = [];
    testScheduler().run(({ cold, expectSubscriptions, flush }) => {
      const output$ = cold('-o---|', { o: output() });
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => cold('-(a|)', { a: snapshot('finish', [node('n1', 'finish')]) }),
        output: () => output$,
        abort: () => cold('(x|)'),
      });
      runsOver(source, defaults)
        .run(CANVAS_ID)
        .pipe(takeWhile((event) => event.type !== 'finished'))
        .subscribe((event) => seen.push(event.type));
      // The output read is cut short at 103: the subscriber left on `finished`, before the run completed.
      expectSubscriptions(output$.subscriptions).toBe('102ms ^!');
      flush();
      expect(source.calls.abort).toBe(0);
    });
    expect(seen).toEqual(['started', 'status', 'node']);
  });

  it('leaves a watched execution alone on unsubscribe by default, and aborts it when asked', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({ status: () => cold('-(a|)', { a: executing }), abort: () => abort$ });
      const runs = runsOver(source, defaults);
      expectObservable(runs.watch(EXECUTION_ID, { output: 'final' }), '50ms !').toBe('-(sn)', {
        s: { type: 'started', executionId: EXECUTION_ID, status: 'executing' },
        n: nodeEvent,
      });
      expectObservable(runs.watch(EXECUTION_ID, { output: 'final', abortOnUnsubscribe: true }), '60ms !').toBe('-(sn)', {
        s: { type: 'started', executionId: EXECUTION_ID, status: 'executing' },
        n: nodeEvent,
      });
      expectSubscriptions(abort$.subscriptions).toBe('60ms ^!');
    });
  });

  it('sends an abort that is refused once (the http layer decided already) and logs the failure with the execution id', () => {
    const warn = vi.fn();
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const refused = new NotFoundError({ endpoint: 'abort', status: 200, errCode: 'E1021' });
      const abort$ = cold<undefined>('-#', undefined, refused);
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold('-(a|)', { a: executing }), abort: () => abort$ });
      expectObservable(runsOver(source, { ...defaults, logger: { warn } }).run(CANVAS_ID, {}, { output: 'final' }), '50ms !').toBe('-s', { s: startedEvent });
      expectSubscriptions(abort$.subscriptions).toBe('50ms ^!');
      flush();
      expect(warn).toHaveBeenCalledWith('Could not abort the execution', { executionId: EXECUTION_ID, error: refused });
    });
  });

  it('sends an abort again through an outage, with backoff, until outageMs after its first failure, then logs the failure with the execution id', () => {
    const warn = vi.fn();
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const abort$ = cold<undefined>('-#', undefined, transient('connect ECONNREFUSED'));
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold('-(a|)', { a: executing }), abort: () => abort$ });
      expectObservable(runsOver(source, { ...defaults, logger: { warn } }).run(CANVAS_ID, {}, { output: 'final', outageMs: 3_000 }), '50ms !').toBe('-s', { s: startedEvent });
      // First failure at 51 ms; waits of 750 ms and 1.5 s (random 0.5), then the last one cut to end 3 s after the first failure.
      expectSubscriptions(abort$.subscriptions).toBe(['50ms ^!', '801ms ^!', '2302ms ^!', '3051ms ^!']);
      flush();
      expect(source.calls.abort).toBe(4);
      expect(warn).toHaveBeenCalledTimes(1);
      const [message, meta] = warn.mock.calls[0] as [string, { executionId: string; error: Error }];
      expect(message).toBe('Could not abort the execution');
      expect(meta.executionId).toBe(EXECUTION_ID);
      expect(meta.error).toBeInstanceOf(NetworkError);
      expect(meta.error.message).toMatch(/for 3 s, 4 failed attempts/);
    });
  });

  it('stops sending the abort once one gets through the outage: it reaches the service once', () => {
    const warn = vi.fn();
    testScheduler().run(({ cold, expectSubscriptions, flush }) => {
      const failing = cold<undefined>('-#', undefined, transient('socket hang up'));
      const answered = cold<undefined>('-(x|)', { x: undefined });
      let attempts = 0;
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => cold('-(a|)', { a: executing }),
        abort: () => (++attempts < 3 ? failing : answered),
      });
      runsOver(source, { ...defaults, logger: { warn } }).run(CANVAS_ID, {}, { output: 'final' }).subscribe().unsubscribe();
      flush();
      // The start answers at 1 ms: aborts fail at 2 and 753 ms (waits of 750 ms and 1.5 s), the third answers.
      expectSubscriptions(answered.subscriptions).toBe('2253ms ^!');
      expect(source.calls.abort).toBe(3);
      expect(warn).not.toHaveBeenCalled();
    });
  });

  it('keeps an abort that the request budget holds for longer than 30 s (a 429 pause), and sends it', () => {
    const warn = vi.fn();
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      // The budget lets the abort go only after the service's window has reset (~62 s after a 429).
      const abort$ = cold<undefined>('62s (x|)', { x: undefined });
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold('-(a|)', { a: executing }), abort: () => abort$ });
      expectObservable(runsOver(source, { ...defaults, logger: { warn } }).run(CANVAS_ID, {}, { output: 'final' }), '50ms !').toBe('-s', { s: startedEvent });
      expectSubscriptions(abort$.subscriptions).toBe('50ms ^ 61999ms !');
      flush();
      expect(warn).not.toHaveBeenCalled();
    });
  });
});

describe('timeout and signal (virtual time)', () => {
  it('aborts and errors with RunTimeoutError when timeoutMs passes', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold('-(a|)', { a: executing }), abort: () => abort$ });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final', timeoutMs: 250 })).toBe(
        '-s 100ms n 147ms #',
        { s: startedEvent, n: nodeEvent },
        new RunTimeoutError(250, EXECUTION_ID),
      );
      expectSubscriptions(abort$.subscriptions).toBe('250ms ^!');
    });
  });

  it('times out during the start: errors at once, aborts when the id arrives', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const start$ = cold('500ms (s|)', { s: started() });
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({ start: () => start$, abort: () => abort$ });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { timeoutMs: 250 })).toBe('250ms #', undefined, new RunTimeoutError(250));
      expectSubscriptions(start$.subscriptions).toBe('^ 499ms !');
      expectSubscriptions(abort$.subscriptions).toBe('500ms ^!');
    });
  });

  it('treats an aborted signal like an unsubscribe and errors with its reason', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const controller = new AbortController();
      const reason = new Error('user left');
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold('-(a|)', { a: executing }), abort: () => abort$ });
      cold('120ms a').subscribe(() => {
        controller.abort(reason);
      });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final', signal: controller.signal })).toBe(
        '-s 100ms n 17ms #',
        { s: startedEvent, n: nodeEvent },
        reason,
      );
      expectSubscriptions(abort$.subscriptions).toBe('120ms ^!');
    });
  });

  it('does not start at all when the signal is already aborted', () => {
    testScheduler().run(({ expectObservable }) => {
      const reason = new Error('too late');
      const source = scriptedSource({});
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { signal: AbortSignal.abort(reason) })).toBe('#', undefined, reason);
    });
  });
});
