import { describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../src/runs/events.js';
import { runsOver } from '../../src/runs/runs.js';
import { CANVAS_ID, EXECUTION_ID, message, node, output, outputNode, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';

const defaults = { random: () => 0.5, polling: { minMs: 100, maxMs: 400 } };
const executing = snapshot('executing', [node('n1', 'executing')]);

describe('run cadence (virtual time)', () => {
  it('reads the status fast after the start, then backs off ×1.5 while nothing changes, never slower than maxMs', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const start$ = cold('-(s|)', { s: started() });
      const status$ = cold('-(a|)', { a: executing });
      const abort$ = cold('-(x|)', { x: undefined });
      const source = scriptedSource({ start: () => start$, status: () => status$, abort: () => abort$ });
      const run$ = runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' });

      expectObservable(run$, '1800ms !').toBe('-s 100ms n', {
        s: { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' },
        n: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'executing' },
      });
      // Waits: 100 after the start, 100 after the change, then 150, 225, 338, 400, 400.
      expectSubscriptions(status$.subscriptions).toBe(['101ms ^!', '202ms ^!', '353ms ^!', '579ms ^!', '918ms ^!', '1319ms ^!', '1720ms ^!']);
      expectSubscriptions(abort$.subscriptions).toBe(['1800ms ^!']);
    });
  });

  it('keeps reading fast while every node is done but the execution still says executing, then ends with one output read', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const statuses = [
        cold('-(a|)', { a: executing }),
        cold('-(a|)', { a: snapshot('executing', [node('n1', 'finish')]) }),
        cold('-(a|)', { a: snapshot('executing', [node('n1', 'finish')]) }),
        cold('-(a|)', { a: snapshot('finish', [node('n1', 'finish')]) }),
      ];
      const output$ = cold('-(o|)', { o: output([outputNode('n1', 'finish', [message('m1', 'done')])]) });
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: (call) => statuses[call]!, output: () => output$ });
      const run$ = runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' });

      expectObservable(run$).toBe('-s 100ms n 100ms f 201ms S(MF|)', {
        s: { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' },
        n: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'executing' },
        f: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'finish', previous: 'executing' },
        S: { type: 'status', executionId: EXECUTION_ID, status: 'finish', previous: 'executing' },
        M: {
          type: 'message',
          executionId: EXECUTION_ID,
          nodeId: 'n1',
          messageId: 'm1',
          role: 'ai',
          delta: 'done',
          reasoningDelta: '',
          content: 'done',
          reasoningContent: '',
          replaced: false,
        },
        F: {
          type: 'finished',
          executionId: EXECUTION_ID,
          result: {
            executionId: EXECUTION_ID,
            canvasId: CANVAS_ID,
            status: 'finish',
            endedBy: 'finish',
            nodes: [node('n1', 'finish')],
            output: [outputNode('n1', 'finish', [message('m1', 'done')])],
            files: [],
            failedNodes: [],
            runningNodes: [],
          },
        },
      });
      // After the change at 203 the wait is 100; at 304 nothing changed but all is done: 100 again, not 150.
      ['101ms ^!', '202ms ^!', '303ms ^!', '404ms ^!'].forEach((window, call) => {
        expectSubscriptions(statuses[call]!.subscriptions).toBe(window);
      });
      expectSubscriptions(output$.subscriptions).toBe(['405ms ^!']);
    });
  });

  it('streams: reads the output alone while a node executes, no more often than every 3 s; new messages do not speed up the reads', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const status$ = cold('-(a|)', { a: executing });
      const outputs = [
        cold('-(o|)', { o: output([outputNode('n1', 'executing', [message('m1', 'hi')])]) }),
        cold('-(o|)', { o: output([outputNode('n1', 'executing', [message('m1', 'hi'), message('m2', 'there')])]) }),
      ];
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => status$, output: (call) => outputs[call]!, abort: () => cold('(x|)') });
      const m = { type: 'message', executionId: EXECUTION_ID, nodeId: 'n1', role: 'ai', reasoningDelta: '', reasoningContent: '', replaced: false } as const;
      expectObservable(runsOver(source, defaults).run(CANVAS_ID), '3800ms !').toBe('-s 100ms n 100ms m 3121ms M', {
        s: { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' },
        n: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'executing' },
        m: { ...m, messageId: 'm1', delta: 'hi', content: 'hi' },
        M: { ...m, messageId: 'm2', delta: 'there', content: 'there' },
      });
      // The status read that first shows n1 executing is not followed by the output: the next read, 100 ms
      // later, is the output alone. 3 s after it, again: it shows n1 still executing (service.md §4.2).
      expectSubscriptions(outputs[0]!.subscriptions).toBe('202ms ^!');
      expectSubscriptions(outputs[1]!.subscriptions).toBe('3324ms ^!');
      // After the new message at 3325 the wait stays at the slowest, 400 ms: the next read, of the status, is at 3725.
      flush();
      expect(status$.subscriptions.map((log) => log.subscribedFrame).slice(-2)).toEqual([2923, 3725]);
    });
  });

  it('streams: an output read alone moves the nodes it shows, their node events before their text, and leaves the end to one status read', () => {
    const calls: string[] = [];
    const events: RunEvent[] = [];
    testScheduler().run(({ cold, flush }) => {
      let ended = false;
      const running = [outputNode('n1', 'executing', [message('m1', 'hi')]), outputNode('n2', 'init')];
      const done = [outputNode('n1', 'finish', [message('m1', 'hi')]), outputNode('n2', 'finish', [message('m2', 'bye')])];
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => {
          calls.push('status');
          const nodes = ended ? [node('n1', 'finish'), node('n2', 'finish')] : [node('n1', 'executing'), node('n2', 'init')];
          return cold('-(a|)', { a: snapshot(ended ? 'finish' : 'executing', nodes) });
        },
        output: (call) => {
          calls.push('output');
          // The server moves on between the first output read and the second.
          if (call > 0) ended = true;
          return cold('-(o|)', { o: output(call === 0 ? running : done) });
        },
        abort: () => cold('(x|)'),
      });
      runsOver(source, defaults).run(CANVAS_ID).subscribe((event) => events.push(event));
      flush();
    });
    const described = events.map((event) =>
      event.type === 'node' ? `${event.nodeId}:${event.status}` : event.type === 'message' ? `text:${event.messageId}` : event.type === 'status' ? `status:${event.status}` : event.type,
    );
    expect(described).toEqual(['started', 'n1:executing', 'n2:init', 'text:m1', 'n1:finish', 'n2:finish', 'text:m2', 'status:finish', 'finished']);
    // The status and output at first; statuses while the output is spaced; the output alone, which
    // shows every node finished with its text; then the status (every node done: it may now say
    // finish), and no output read after it: the last one already holds the final output.
    expect(calls.slice(0, 2)).toEqual(['status', 'output']);
    expect(calls.slice(2, -2).every((call) => call === 'status')).toBe(true);
    expect(calls.slice(-2)).toEqual(['output', 'status']);
  });

  it('streams: after an output read alone shows a node failed, the next read is the status, which says failed', () => {
    const calls: string[] = [];
    const events: RunEvent[] = [];
    testScheduler().run(({ cold, flush }) => {
      let failed = false;
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: () => {
          calls.push('status');
          const nodes = [node('n1', failed ? 'failed' : 'executing'), node('n2', 'executing')];
          return cold('-(a|)', { a: snapshot(failed ? 'failed' : 'executing', nodes) });
        },
        output: (call) => {
          calls.push('output');
          if (call > 0) failed = true;
          return cold('-(o|)', { o: output([outputNode('n1', failed ? 'failed' : 'executing'), outputNode('n2', 'executing')]) });
        },
        abort: () => cold('(x|)'),
      });
      runsOver(source, defaults).run(CANVAS_ID, {}, { failOnWorkflowError: false }).subscribe((event) => events.push(event));
      flush();
    });
    expect(calls.slice(-3)).toEqual(['output', 'status', 'output']);
    const described = events.map((event) => (event.type === 'node' ? `${event.nodeId}:${event.status}` : event.type === 'status' ? `status:${event.status}` : event.type));
    expect(described.slice(-3)).toEqual(['n1:failed', 'status:failed', 'finished']);
  });

  it('streams: when a status read shows a node ended, the next read is the output alone, within the spacing', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const statuses = [
        cold('-(a|)', { a: snapshot('executing', [node('n1', 'executing'), node('n2', 'executing')]) }),
        cold('-(a|)', { a: snapshot('executing', [node('n1', 'finish'), node('n2', 'executing')]) }),
      ];
      const outputs = [
        cold('-(o|)', { o: output([outputNode('n1', 'executing'), outputNode('n2', 'executing')]) }),
        cold('-(o|)', { o: output([outputNode('n1', 'finish', [message('m1', 'done')]), outputNode('n2', 'executing')]) }),
      ];
      const source = scriptedSource({
        start: () => cold('-(s|)', { s: started() }),
        status: (call) => statuses[Math.min(call, 1)]!,
        output: (call) => outputs[Math.min(call, 1)]!,
        abort: () => cold('(x|)'),
      });
      const m = { type: 'message', executionId: EXECUTION_ID, nodeId: 'n1', role: 'ai', reasoningDelta: '', reasoningContent: '', replaced: false } as const;
      expectObservable(runsOver(source, defaults).run(CANVAS_ID), '600ms !').toBe('-s 100ms (ab) 248ms f 100ms M', {
        s: { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' },
        a: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'executing' },
        b: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n2', title: 'Title n2', status: 'executing' },
        f: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'finish', previous: 'executing' },
        M: { ...m, messageId: 'm1', delta: 'done', content: 'done' },
      });
      // Status at 101; the output alone at 202 (nothing new: the wait grows to 150); the status at 353
      // shows n1 ended: the next read, 100 ms after its answer and well within the 3 s spacing, is the output alone.
      expectSubscriptions(outputs[0]!.subscriptions).toBe('202ms ^!');
      expectSubscriptions(outputs[1]!.subscriptions).toBe('454ms ^!');
      expectSubscriptions(statuses[1]!.subscriptions).toBe('353ms ^!');
    });
  });

  it('stops reading fast when the execution stays executing after every node is done for longer than two ticks', () => {
    const status$ = testScheduler().run(({ cold, expectObservable }) => {
      const finished$ = cold('-(a|)', { a: snapshot('executing', [node('n1', 'finish')]) });
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => finished$, abort: () => cold('(x|)') });
      expectObservable(runsOver(source, defaults).run(CANVAS_ID, {}, { output: 'final' }), '4500ms !');
      return finished$;
    });
    const frames = status$.subscriptions.map((log) => log.subscribedFrame);
    const gaps = frames.slice(1).map((frame, index) => frame - frames[index]!);
    // Each gap is the wait plus the frame the answer takes. Settling from 203: 100 ms waits for 3 s.
    expect(gaps.slice(0, 30)).toEqual(Array.from({ length: 30 }, () => 101));
    expect(gaps.slice(30, 34)).toEqual([151, 226, 339, 401]);
  });

  it('logs an unknown node status once and keeps following the run', () => {
    const warn = vi.fn();
    testScheduler().run(({ cold, expectObservable }) => {
      const odd = { ...node('n1', 'unknown'), rawStatus: 'paused' };
      const source = scriptedSource({ start: () => cold('-(s|)', { s: started() }), status: () => cold('-(a|)', { a: snapshot('executing', [odd]) }), abort: () => cold('(x|)') });
      expectObservable(runsOver(source, { ...defaults, logger: { warn } }).run(CANVAS_ID, {}, { output: 'final' }), '1000ms !').toBe('-s 100ms n', {
        s: { type: 'started', executionId: EXECUTION_ID, canvasId: CANVAS_ID, status: 'executing' },
        n: { type: 'node', executionId: EXECUTION_ID, nodeId: 'n1', title: 'Title n1', status: 'unknown' },
      });
    });
    expect(warn).toHaveBeenCalledExactlyOnceWith('Unknown node status', { executionId: EXECUTION_ID, nodeId: 'n1', status: 'paused' });
  });
});
