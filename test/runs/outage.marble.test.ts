import fc from 'fast-check';
import { concat, of, take, takeWhile, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { AuthenticationError, ServerError } from '../../src/errors/api-errors.js';
import { FlowstreamError } from '../../src/errors/flowstream-error.js';
import { NetworkError, TimeoutError } from '../../src/errors/transport-errors.js';
import { ResponseValidationError } from '../../src/errors/validation-errors.js';
import { runsOver } from '../../src/runs/runs.js';
import type { RunEvent } from '../../src/runs/events.js';
import type { StartProgress } from '../../src/runs/run-lifecycle.js';
import { afterFailure, isOutage, type Outage, OUTAGE_MAX_DELAY_MS } from '../../src/runs/poll.js';
import { type RunState, runStore, toRunState } from '../../src/runs/run-state.js';
import { CANVAS_ID, EXECUTION_ID, node, output, scriptedSource, sentStart, snapshot, started, testScheduler } from './fixtures.js';

const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 400 } };
const executing = snapshot('executing', [node('n1', 'executing')]);
const finished = snapshot('finish', [node('n1', 'finish')]);
const startedEvent = { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' };
const nodeEvent = { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'executing' };

function dropped(): NetworkError {
  return new NetworkError({ endpoint: 'status', cause: new Error('socket hang up') });
}

function connection(attempts: number, failingForMs: number, error = 'network error'): RunEvent {
  return { type: 'connection', executionId: EXECUTION_ID, reconnecting: { attempts, failingForMs, error } };
}

const reconnected: RunEvent = { type: 'connection', executionId: EXECUTION_ID };

describe('a run reading through an outage (virtual time)', () => {
  it('reads again with backoff while reads fail for an outage, tells each failure, and goes on once one succeeds', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const failing = cold<never>('-#', undefined, dropped());
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => (call < 2 ? failing : cold('-(a|)', { a: executing })),
        abort: () => cold('(x|)', { x: undefined }),
      });
      // First read at 101 fails at 102; again after 750 ms (fails at 853), then after 1.5 s: answered at 2354.
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' }), '2400ms !').toBe('-s 100ms a 750ms b 1500ms (cn)', {
        s: startedEvent,
        a: connection(1, 0),
        b: connection(2, 751),
        c: reconnected,
        n: nodeEvent,
      });
    });
  });

  it('errors with the last failure, carrying the executionId and saying how long it tried, once the outage outlasts outageMs; nothing is aborted', () => {
    const failure = new ServerError({ endpoint: 'status', status: 503 });
    let caught: unknown;
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold<never>('-#', undefined, failure), abort: () => cold('(x|)', { x: undefined }) });
      const run$ = runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final', outageMs: 2_000 });
      // The last wait is cut to end 2 s after the first failure (102 + 2,000): that read fails at 2103 and the run gives up.
      expectObservable(run$).toBe('-s 100ms a 750ms b 1249ms #', { s: startedEvent, a: connection(1, 0, 'HTTP 503'), b: connection(2, 751, 'HTTP 503') }, failure);
      run$.subscribe({ error: (error: unknown) => (caught = error) });
      flush();
      expect(source.calls.abort).toBe(0);
    });
    expect(caught).toBeInstanceOf(ServerError);
    expect(caught).toMatchObject({ executionId: EXECUTION_ID, message: expect.stringMatching(/for 2 s, 3 failed attempts, then gave up/) as unknown });
  });

  it('leaves nothing pending when unsubscribed while waiting to read again, or on a connection event itself', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const failing = cold<never>('-#', undefined, dropped());
      const waiting = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => failing, abort: () => cold('(x|)', { x: undefined }) });
      expectObservable(runsOver(waiting, defaults).run(CANVAS_ID, {}, { output: 'final' }), '500ms !').toBe('-s 100ms a', { s: startedEvent, a: connection(1, 0) });
      flush();
      expectSubscriptions(failing.subscriptions).toBe('101ms ^!');
      const leaving = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold<never>('-#', undefined, dropped()), abort: () => cold('(x|)', { x: undefined }) });
      runsOver(leaving, defaults)
        .run(CANVAS_ID, {}, { output: 'final' })
        .pipe(takeWhile((event) => event.type !== 'connection'))
        .subscribe();
      flush();
      expect(leaving.calls).toEqual({ start: 1, status: 1, output: 0, abort: 1 });
    });
  });

  it('reads again at once, not after its backoff, when an abort asked for during the outage is answered', async () => {
    let endedBy: string | undefined;
    testScheduler().run(({ cold, expectSubscriptions, flush }) => {
      const failing = cold<never>('-#', undefined, dropped());
      const aborted = cold('-(a|)', { a: snapshot('failed', [node('n1', 'failed')]) });
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => (call === 0 ? failing : aborted),
        output: () => cold('(o|)', { o: output() }),
        abort: () => cold('-(x|)', { x: undefined }),
      });
      const handle = runsOver(source, defaults).startRun(CANVAS_ID, {}, { output: 'final' });
      void handle.result.then((result) => (endedBy = result.endedBy));
      // The first read fails at 102 and waits 750 ms; the cancel at 200 is answered at 201, and the end is read then.
      cold('200ms x').subscribe(() => void handle.cancel());
      flush();
      expectSubscriptions(aborted.subscriptions).toBe('201ms ^!');
    });
    await Promise.resolve();
    expect(endedBy).toBe('aborted');
  });

  it('errors at once on a failure that is no outage (401), as before', () => {
    const failure = new AuthenticationError({ endpoint: 'status', status: 401 });
    testScheduler().run(({ cold, expectObservable }) => {
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold<never>('-#', undefined, failure) });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' })).toBe('-s 100ms #', { s: startedEvent }, failure);
    });
  });

  it('errors at the first failed read with outageMs 0', () => {
    const failure = dropped();
    testScheduler().run(({ cold, expectObservable }) => {
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold<never>('-#', undefined, failure) });
      expectObservable(runsOver(source, { ...defaults, outageMs: 0 }).run(CANVAS_ID, {}, { output: 'final' })).toBe('-s 100ms #', { s: startedEvent }, failure);
    });
  });

  it('shows reconnecting in toRunState and runStore while the outage lasts, from its first failure, and drops it once a read succeeds', () => {
    const states: RunState[] = [];
    const snapshots: (RunState | undefined)[] = [];
    testScheduler().run(({ cold, flush }) => {
      const failing = cold<never>('-#', undefined, dropped());
      const script = () =>
        scriptedSource({
          start: () => cold('-(s|)', { s: started() }),
          status: (call) => (call < 2 ? failing : call === 2 ? cold('-(a|)', { a: executing }) : cold('-(a|)', { a: finished })),
          output: () => cold('(o|)', { o: output() }),
        });
      runsOver(script(), defaults)
        .run(CANVAS_ID, {}, { output: 'final' })
        .pipe(toRunState())
        .subscribe((state) => states.push(state));
      const store = runStore(runsOver(script(), defaults).run(CANVAS_ID, {}, { output: 'final' }));
      store.subscribe((state) => snapshots.push(state));
      flush();
    });
    for (const seen of [states, snapshots.filter((state): state is RunState => state !== undefined)]) {
      expect(seen.slice(0, 4).map((state) => state.reconnecting)).toEqual([
        undefined,
        { since: 102, attempts: 1, error: 'network error' },
        { since: 102, attempts: 2, error: 'network error' },
        undefined,
      ]);
      expect(seen.slice(4).every((state) => state.reconnecting === undefined)).toBe(true);
      expect(seen.at(-1)?.result?.status).toBe('finish');
    }
  });

  it("shows reconnecting in a handle's state, and gives it to a late subscriber of its events in the snapshot", () => {
    const states: (RunState['reconnecting'] | 'none')[] = [];
    const late: RunEvent[] = [];
    testScheduler().run(({ cold, flush }) => {
      const failing = cold<never>('-#', undefined, dropped());
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => (call === 0 ? failing : cold('-(a|)', { a: finished })),
        output: () => cold('(o|)', { o: output() }),
      });
      const handle = runsOver(source, defaults).startRun(CANVAS_ID, {}, { output: 'final' });
      handle.state.subscribe((state) => states.push(state.reconnecting ?? 'none'));
      cold('500ms x').subscribe(() => handle.events.subscribe((event) => late.push(event)));
      flush();
    });
    expect(states.slice(0, 3)).toEqual(['none', { since: 102, attempts: 1, error: 'network error' }, 'none']);
    expect(states.slice(3).every((state) => state === 'none')).toBe(true);
    const [caught] = late;
    expect(caught?.type === 'snapshot' && caught.state.reconnecting).toEqual({ since: 102, attempts: 1, error: 'network error' });
    expect(late.at(-1)?.type).toBe('finished');
  });
});

describe('outage rules', () => {
  it('counts network errors, timeouts, 5xx, a cut-off answer and an unavailable budget as an outage, and nothing else', () => {
    expect(isOutage(dropped())).toBe(true);
    expect(isOutage(new TimeoutError({ endpoint: 'status', timeoutMs: 30_000 }))).toBe(true);
    expect(isOutage(new ServerError({ endpoint: 'output', status: 502 }))).toBe(true);
    expect(isOutage(new ServerError({ endpoint: 'status', status: 200, errCode: 'E0000' }))).toBe(true);
    expect(isOutage(new ResponseValidationError({ endpoint: 'status', reason: 'not-json' }))).toBe(true);
    expect(isOutage(new FlowstreamError('Redis did not answer', 'BUDGET_UNAVAILABLE'))).toBe(true);
    expect(isOutage(new AuthenticationError({ endpoint: 'status', status: 401 }))).toBe(false);
    expect(isOutage(new ResponseValidationError({ endpoint: 'status', reason: 'schema' }))).toBe(false);
    expect(isOutage(new FlowstreamError('Network request failed', 'NETWORK_ERROR'))).toBe(false);
    expect(isOutage(new Error('boom'))).toBe(false);
  });

  it('reads again within the outage, never waiting past outageMs after its first failure, and gives up only after it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3_600_000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 120_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 2_000_000 }),
        (start, failures, outageMs) => {
          let outage: Outage | undefined;
          let now = start;
          for (const [readMs, random] of failures) {
            const step = afterFailure(outage, dropped(), now, random, outageMs);
            const since = outage?.since ?? now;
            if (step.kind === 'give-up') {
              expect(now - since).toBeGreaterThanOrEqual(outageMs);
              return;
            }
            expect(step.outage.since).toBe(since);
            expect(step.outage.attempts).toBe((outage?.attempts ?? 0) + 1);
            expect(step.delayMs).toBeGreaterThan(0);
            expect(step.delayMs).toBeLessThanOrEqual(OUTAGE_MAX_DELAY_MS);
            expect(now + step.delayMs).toBeLessThanOrEqual(since + outageMs);
            outage = step.outage;
            now += step.delayMs + readMs;
          }
        },
      ),
    );
  });

  it('gives up at once on a failure that is no outage, keeping the outage it ended', () => {
    const outage: Outage = { since: 0, attempts: 2, error: 'network error' };
    expect(afterFailure(outage, new AuthenticationError({ endpoint: 'status', status: 401 }), 10, 0.5, 60_000)).toEqual({ kind: 'give-up', outage });
  });
});

describe('a start the request budget could not send (virtual time)', () => {
  const unavailable = (): FlowstreamError => new FlowstreamError('Redis did not answer the request budget: nothing was sent', 'BUDGET_UNAVAILABLE');

  it('is made again through the budget outage, with backoff, and starts one execution once the budget serves', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const scripted = scriptedSource({ abort: () => cold('(x|)', { x: undefined }) });
      let starts = 0;
      const source = {
        ...scripted,
        start: () => {
          starts += 1;
          // Refused twice before anything of it left, then sent and answered.
          return starts <= 2 ? cold<never>('-#', undefined, unavailable()) : sentStart(cold('-(s|)', { s: started() }));
        },
      };
      const run$ = runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' }).pipe(take(1));
      // Refused at 1; again after 750 ms (refused at 752), then after 1.5 s: sent at 2252, started at 2253.
      expectObservable(run$).toBe('2253ms (s|)', { s: startedEvent });
      flush();
      expect(starts).toBe(3);
    });
  });

  it('is not made again once a request of it was on its way: it may have reached the service', () => {
    testScheduler().run(({ expectObservable, flush }) => {
      let starts = 0;
      const source = {
        ...scriptedSource({}),
        start: () => {
          starts += 1;
          return concat(of<StartProgress>({ type: 'sending', sending: true }), throwError(unavailable));
        },
      };
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' })).toBe('#', undefined, unavailable());
      flush();
      expect(starts).toBe(1);
    });
  });

  it('errors with the budget failure once the outage outlasts outageMs, having started nothing', () => {
    const scheduler = testScheduler();
    let caught: unknown;
    let at: number | undefined;
    scheduler.run(({ cold, flush }) => {
      let starts = 0;
      const source = {
        ...scriptedSource({}),
        start: () => {
          starts += 1;
          return cold<never>('-#', undefined, unavailable());
        },
      };
      runsOver(source, defaults)
        .run(CANVAS_ID, {}, { output: 'final', outageMs: 2_000 })
        .subscribe({
          error: (error: unknown) => {
            caught = error;
            at = scheduler.now();
          },
        });
      flush();
      // Refused at 1 and 752; the last wait is cut to end 2 s after the first refusal (2001), refused at 2002.
      expect(starts).toBe(3);
    });
    expect(at).toBe(2002);
    expect(caught).toBeInstanceOf(FlowstreamError);
    expect((caught as FlowstreamError).code).toBe('BUDGET_UNAVAILABLE');
    expect((caught as FlowstreamError).message).toMatch(/tried again through the outage for 2 s, 3 failed attempts/u);
  });
});
