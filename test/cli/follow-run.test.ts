import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { RunEvent, RunResult } from '../../src/index.js';
import { followRun } from '../../src/cli/progress/follow-run.js';
import type { InterruptSource, StopSignal } from '../../src/cli/progress/interrupts.js';
import type { RunRenderer } from '../../src/cli/progress/renderer.js';

const executionId = 'we-1';
const result: RunResult = { executionId, status: 'finish', endedBy: 'finish', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] };

function harness(): { interrupts: InterruptSource; interrupt: (signal?: StopSignal) => void; listening: () => boolean; renderer: RunRenderer; closed: (RunResult | undefined)[]; notices: string[] } {
  let listener: ((signal: StopSignal) => void) | undefined;
  const closed: (RunResult | undefined)[] = [];
  const notices: string[] = [];
  return {
    interrupts: (next) => {
      listener = next;
      return () => {
        listener = undefined;
      };
    },
    interrupt: (signal = 'SIGINT') => listener?.(signal),
    listening: () => listener !== undefined,
    renderer: { event: () => undefined, close: (closing) => closed.push(closing) },
    closed,
    notices,
  };
}

/** A run whose teardown is counted: with abortOnUnsubscribe, that teardown is what aborts the execution. */
function countedRun(): { run$: Observable<RunEvent>; events: Subject<RunEvent>; teardowns: () => number } {
  const events = new Subject<RunEvent>();
  let teardowns = 0;
  const run$ = new Observable<RunEvent>((subscriber) => {
    const subscription = events.subscribe(subscriber);
    return () => {
      teardowns += 1;
      subscription.unsubscribe();
    };
  });
  return { run$, events, teardowns: () => teardowns };
}

describe('followRun', () => {
  it('settles with the result, closes the display with it and stops listening for Ctrl-C', async () => {
    const h = harness();
    const { run$, events } = countedRun();
    const ending = followRun(run$, { renderer: h.renderer, onInterrupt: 'abort', interrupts: h.interrupts, notices: { write: (t: string) => h.notices.push(t) } });
    events.next({ type: 'started', executionId, status: 'executing' });
    events.next({ type: 'finished', executionId, result });
    events.complete();
    expect(await ending).toEqual({ kind: 'finished', result });
    expect(h.closed).toEqual([result]);
    expect(h.listening()).toBe(false);
  });

  it('on Ctrl-C in abort mode unsubscribes once, whatever comes after', async () => {
    const h = harness();
    const { run$, events, teardowns } = countedRun();
    const ending = followRun(run$, { renderer: h.renderer, onInterrupt: 'abort', interrupts: h.interrupts, notices: { write: (t: string) => h.notices.push(t) } });
    events.next({ type: 'started', executionId, status: 'executing' });
    h.interrupt();
    h.interrupt();
    expect(await ending).toEqual({ kind: 'interrupted', signal: 'SIGINT', executionId, detached: false });
    expect(teardowns()).toBe(1);
    expect(h.notices.join('')).toContain('aborting execution we-1');
  });

  it('on Ctrl-C in detach mode before the start answered, detaches once the id is known', async () => {
    const h = harness();
    const { run$, events } = countedRun();
    const ending = followRun(run$, { renderer: h.renderer, onInterrupt: 'detach', interrupts: h.interrupts, notices: { write: (t: string) => h.notices.push(t) } });
    h.interrupt();
    events.next({ type: 'started', executionId, status: 'executing' });
    expect(await ending).toEqual({ kind: 'interrupted', signal: 'SIGINT', executionId, detached: true });
    expect(h.notices.join('')).toContain('flowstream watch we-1');
  });

  it('on SIGTERM or SIGHUP does what Ctrl-C does, and settles with the signal, which it names', async () => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      const h = harness();
      const { run$, events, teardowns } = countedRun();
      const ending = followRun(run$, { renderer: h.renderer, onInterrupt: 'abort', interrupts: h.interrupts, notices: { write: (t: string) => h.notices.push(t) } });
      events.next({ type: 'started', executionId, status: 'executing' });
      h.interrupt(signal);
      expect(await ending).toEqual({ kind: 'interrupted', signal, executionId, detached: false });
      expect(teardowns()).toBe(1);
      expect(h.notices.join('')).toContain(`Interrupted by ${signal}: aborting execution we-1.`);
    }
  });

  it('settles with the error of a run that errors, even synchronously at subscribe', async () => {
    const h = harness();
    const failure = new Error('no');
    const ending = await followRun(new Observable<RunEvent>((subscriber) => {
      subscriber.error(failure);
    }), { renderer: h.renderer, onInterrupt: 'abort', interrupts: h.interrupts, notices: { write: () => true } });
    expect(ending).toEqual({ kind: 'error', error: failure });
    expect(h.closed).toEqual([undefined]);
  });
});
