import { describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, runStore } from '../../src/runs/run-state.js';
import { runsOver } from '../../src/runs/runs.js';
import { CANVAS_ID, EXECUTION_ID, node, output, outputNode, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

const ev = {
  s: { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' },
  a: { type: 'node', executionId: EXECUTION_ID, nodeId: 'a', status: 'executing' },
  b: { type: 'node', executionId: EXECUTION_ID, nodeId: 'a', status: 'finish', previous: 'executing' },
} satisfies Record<string, RunEvent>;

/** A listener that records what it was called with, and the store's snapshot at that moment. */
function recorder(store: { getSnapshot(): RunState | undefined }) {
  const calls: (string | undefined)[] = [];
  const listener = (state: RunState | undefined): void => {
    expect(state).toBe(store.getSnapshot());
    calls.push(state === undefined ? undefined : `${state.status ?? '-'} ${state.nodes.map((node) => node.status).join(',')}`);
  };
  return { calls, listener };
}

describe('runStore: a store for useSyncExternalStore, Svelte and Vue', () => {
  it('subscribes the run once for all listeners and unsubscribes it when the last one leaves', () => {
    testScheduler().run(({ cold, expectSubscriptions, flush }) => {
      const run$ = cold<RunEvent>('s 9ms a 9ms b', ev);
      const store = runStore(run$);
      const first = recorder(store);
      const second = recorder(store);
      expect(store.getSnapshot()).toBeUndefined();
      const leaveFirst = store.subscribe(first.listener);
      let leaveSecond = (): void => undefined;
      cold('5ms x 9ms y 4ms z').subscribe((step) => {
        if (step === 'x') leaveSecond = store.subscribe(second.listener);
        if (step === 'y') leaveFirst();
        if (step === 'z') leaveSecond();
      });
      flush();
      // One subscription of the run, from the first listener (0) to the last one leaving (20).
      expectSubscriptions(run$.subscriptions).toBe('^ 19ms !');
      expect(first.calls).toEqual([undefined, 'executing ', 'executing executing']);
      expect(second.calls).toEqual(['executing ', 'executing executing']);
    });
  });

  it("shares a run handle's states: a store made late shows the very state the first one shows, at once", () => {
    const start = node('start', 'finish');
    const reads = [snapshot('executing', [start, node('a', 'executing')]), snapshot('finish', [start, node('a', 'finish')])];
    let early: RunState | undefined;
    let late: RunState | undefined;
    let lateFirst: RunState | undefined;
    testScheduler().run(({ cold, flush }) => {
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => cold('(a|)', { a: reads[Math.min(call, 1)]! }),
        output: () => cold('(o|)', { o: output([outputNode('a', 'finish')]) }),
      });
      const handle = runsOver(source, { random: () => 0.5, polling: { minMs: 100, maxMs: 100 } }).startRun(CANVAS_ID, {}, { output: 'final' });
      const first = runStore(handle.events);
      first.subscribe(() => undefined);
      cold('150ms x').subscribe(() => {
        early = first.getSnapshot();
        const second = runStore(handle.events);
        second.subscribe((state) => {
          lateFirst ??= state;
        });
        late = second.getSnapshot();
      });
      flush();
    });
    // Joined between two reads: the state of the read at 101, the same object, not one rebuilt from made-up events.
    expect(early?.nodes.map((entry) => entry.status)).toEqual(['finish', 'executing']);
    expect(late).toBe(early);
    expect(lateFirst).toBe(early);
  });

  it('returns the same snapshot object until the state changes', () => {
    testScheduler().run(({ cold, flush }) => {
      const store = runStore(cold<RunEvent>('s 9ms a', ev));
      const snapshots: (RunState | undefined)[] = [];
      store.subscribe(() => {
        snapshots.push(store.getSnapshot());
      });
      flush();
      expect(snapshots).toHaveLength(3);
      expect(store.getSnapshot()).toBe(snapshots[2]);
      expect(store.getSnapshot()).toBe(store.getSnapshot());
      expect(snapshots[1]).not.toBe(snapshots[2]);
    });
  });

  it('keeps a finished run: later listeners get its last state and never start it again', () => {
    testScheduler().run(({ cold, expectSubscriptions, flush }) => {
      const run$ = cold<RunEvent>('s 4ms (b|)', ev);
      const store = runStore(run$);
      const leave = store.subscribe(() => undefined);
      cold('10ms x').subscribe(() => {
        leave();
        const late = recorder(store);
        store.subscribe(late.listener);
        expect(late.calls).toEqual(['executing finish']);
      });
      flush();
      expectSubscriptions(run$.subscriptions).toBe('^ 4ms !');
    });
  });

  it('makes an error a change: a new snapshot object, and the error to read', () => {
    const failure = new Error('network down');
    testScheduler().run(({ cold, flush }) => {
      const store = runStore(cold<RunEvent>('s 4ms #', ev, failure));
      const snapshots: (RunState | undefined)[] = [];
      store.subscribe((state) => snapshots.push(state));
      flush();
      expect(snapshots).toHaveLength(3);
      expect(snapshots[2]).not.toBe(snapshots[1]);
      expect(snapshots[2]).toEqual(snapshots[1]);
      expect(store.getError()).toBe(failure);
    });
  });

  it('shows an error before any state (a start refused) with a fresh empty snapshot', () => {
    const failure = new Error('canvas not found');
    testScheduler().run(({ cold, flush }) => {
      const store = runStore(cold<RunEvent>('--#', undefined, failure));
      const snapshots: (RunState | undefined)[] = [];
      store.subscribe((state) => snapshots.push(state));
      flush();
      expect(snapshots).toEqual([undefined, { nodes: [], files: [], progress: { succeeded: 0, failed: 0, done: 0, total: 0 }, elapsedMs: 0 }]);
      expect(store.getError()).toBe(failure);
    });
  });

  it('subscribes again after every listener left early, and counts the same function twice', () => {
    testScheduler().run(({ cold, expectSubscriptions, flush }) => {
      const run$ = cold<RunEvent>('s 20ms a', ev);
      const store = runStore(run$);
      const listener = (): void => undefined;
      const leaveOnce = store.subscribe(listener);
      const leaveTwice = store.subscribe(listener);
      cold('3ms x 1ms y 5ms z').subscribe((step) => {
        if (step === 'x') leaveOnce();
        if (step === 'y') {
          leaveOnce();
          leaveTwice();
        }
        if (step === 'z') store.subscribe(listener);
      });
      flush();
      expectSubscriptions(run$.subscriptions).toBe(['^ 4ms !', '11ms ^']);
    });
  });

  it('shows no state of a run it left to a listener that comes later: the run it subscribes again is another', () => {
    testScheduler().run(({ cold, expectSubscriptions, flush }) => {
      const run$ = cold<RunEvent>('s 20ms a', ev);
      const store = runStore(run$);
      const first = recorder(store);
      const later = recorder(store);
      const leave = store.subscribe(first.listener);
      cold('3ms x 7ms y').subscribe((step) => {
        if (step === 'x') leave();
        if (step === 'y') store.subscribe(later.listener);
      });
      flush();
      expectSubscriptions(run$.subscriptions).toBe(['^ 2ms !', '11ms ^']);
      expect(first.calls).toEqual([undefined, 'executing ']);
      // Leaving aborted a `client.run`: its state is not the new execution's, nor still running.
      expect(later.calls).toEqual([undefined, 'executing ', 'executing executing']);
    });
  });

  it('keeps the last state of a run that ended, after every listener left', () => {
    testScheduler().run(({ cold, flush }) => {
      const store = runStore(cold<RunEvent>('s 5ms (a|)', ev));
      const later = recorder(store);
      const leave = store.subscribe(() => undefined);
      cold('10ms x 5ms y').subscribe((step) => {
        if (step === 'x') leave();
        if (step === 'y') store.subscribe(later.listener);
      });
      flush();
      expect(later.calls).toEqual(['executing executing']);
    });
  });

  it('gives every change to every listener when one throws, and hands the error to onListenerError', () => {
    const reported: unknown[] = [];
    const broken = new Error('render failed');
    testScheduler().run(({ cold, flush }) => {
      const store = runStore(cold<RunEvent>('s 9ms a 9ms b', ev), { onListenerError: (error) => reported.push(error) });
      const before = recorder(store);
      const after = recorder(store);
      store.subscribe(before.listener);
      store.subscribe((state) => {
        if (state !== undefined) throw broken;
      });
      store.subscribe(after.listener);
      flush();
      expect(before.calls).toEqual([undefined, 'executing ', 'executing executing', 'executing finish']);
      expect(after.calls).toEqual(before.calls);
      expect(reported).toEqual([broken, broken, broken]);
    });
  });

  it('reports a throwing listener on the console where the platform has no reportError (Node), and goes on', () => {
    const broken = new Error('render failed');
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      testScheduler().run(({ cold, flush }) => {
        const store = runStore(cold<RunEvent>('s 9ms a', ev));
        const after = recorder(store);
        store.subscribe((state) => {
          if (state !== undefined) throw broken;
        });
        store.subscribe(after.listener);
        flush();
        expect(after.calls).toEqual([undefined, 'executing ', 'executing executing']);
      });
      expect(logged.mock.calls.map((call): unknown => call[1])).toEqual([broken, broken]);
    } finally {
      logged.mockRestore();
    }
  });

  it('reports a throwing listener through the platform\'s reportError where there is one (browsers, Deno, Bun)', () => {
    const broken = new Error('render failed');
    const reported: unknown[] = [];
    const platform = globalThis as { reportError?: (error: unknown) => void };
    platform.reportError = (error) => reported.push(error);
    try {
      testScheduler().run(({ cold, flush }) => {
        const store = runStore(cold<RunEvent>('s', ev));
        store.subscribe((state) => {
          if (state !== undefined) throw broken;
        });
        flush();
      });
      expect(reported).toEqual([broken]);
    } finally {
      delete platform.reportError;
    }
  });
});
