import { defer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '../../src/errors/run-errors.js';
import { runEach } from '../../src/pipeline/run-each.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';
import { thenRun } from '../../src/pipeline/then-run.js';
import { inInputOrder } from '../../src/pipeline/in-input-order.js';
import type { RunEvent } from '../../src/runs/events.js';
import { fakeClient, finishedEvent, resultOf, startedEvent, testScheduler } from './fake-client.js';

const inputs = [0, 1, 2, 3].map((n) => ({ variables: { n } }));

describe('inInputOrder', () => {
  it('holds each value until every earlier index has been emitted', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const values = { a: { index: 0 }, b: { index: 1 }, c: { index: 2 } };
      expectObservable(cold('-c-b-a-----|', values).pipe(inInputOrder())).toBe('-----(abc)-|', values);
      expectObservable(cold('-a-c-b----|', values).pipe(inInputOrder())).toBe('-a---(bc)-|', values);
    });
  });
});

const result = (n: number) => resultOf(`we-${n}`);
const each = (n: number) => ({ index: n, input: inputs[n], result: result(n) });

describe('runEach in virtual time', () => {
  it('runs at most `concurrency` at once, the next as soon as one finishes, results in input order', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const runs = ['----', '--', '------', '-'].map((gap, n) => cold<RunEvent>(`s${gap}(f|)`, { s: startedEvent(`we-${n}`), f: finishedEvent(result(n)) }));
      const client = fakeClient({ run: (_canvasId, input) => runs[Number(input.variables?.['n'])]! });
      // we-0 ends at 5, we-1 at 3: we-2 starts at 3 and ends at 10, we-3 starts at 5 and ends at 7.
      expectObservable(runEach(client, 'c-1', inputs, { concurrency: 2 })).toBe('-----(ab)-(cd|)', { a: each(0), b: each(1), c: each(2), d: each(3) });
      expectSubscriptions(runs[0]!.subscriptions).toBe('^----!');
      expectSubscriptions(runs[1]!.subscriptions).toBe('^--!');
      expectSubscriptions(runs[2]!.subscriptions).toBe('---^------!');
      expectSubscriptions(runs[3]!.subscriptions).toBe('-----^-!');
    });
  });

  it('emits each result as it finishes with order: completion', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const runs = ['----', '--', '------', '-'].map((gap, n) => cold<RunEvent>(`s${gap}(f|)`, { s: startedEvent(`we-${n}`), f: finishedEvent(result(n)) }));
      const client = fakeClient({ run: (_canvasId, input) => runs[Number(input.variables?.['n'])]! });
      expectObservable(runEach(client, 'c-1', inputs, { concurrency: 2, order: 'completion' })).toBe('---b-a-d--(c|)', { a: each(0), b: each(1), c: each(2), d: each(3) });
    });
  });

  it('aborts the running executions and starts no more when one workflow fails', () => {
    const client = testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failed = resultOf('we-1', { status: 'failed' });
      const error = new WorkflowFailedError(failed);
      const runs = [
        cold<RunEvent>('s----(f|)', { s: startedEvent('we-0'), f: finishedEvent(result(0)) }),
        cold<RunEvent>('s--f#', { s: startedEvent('we-1'), f: finishedEvent(failed) }, error),
        cold<RunEvent>('s(f|)', { s: startedEvent('we-2'), f: finishedEvent(result(2)) }),
      ];
      const fake = fakeClient({ run: (_canvasId, input) => runs[Number(input.variables?.['n'])]! });
      expectObservable(runEach(fake, 'c-1', inputs, { concurrency: 2 })).toBe('----#', {}, error);
      expectSubscriptions(runs[0]!.subscriptions).toBe('^---!');
      expectSubscriptions(runs[2]!.subscriptions).toBe([]);
      return fake;
    });
    expect(client.calls).toHaveLength(2);
  });

  it('re-runs a failed workflow with retry, and passes run options to every run', () => {
    const client = testScheduler().run(({ cold, expectObservable }) => {
      const failed = resultOf('we-x', { status: 'failed' });
      const attempts = cold<RunEvent>('s-f#', { s: startedEvent('we-x'), f: finishedEvent(failed) }, new WorkflowFailedError(failed));
      let subscribed = 0;
      const second = cold<RunEvent>('s-(f|)', { s: startedEvent('we-0'), f: finishedEvent(result(0)) });
      // A run is cold: the retry resubscribes it, and each subscription is a new execution.
      const fake = fakeClient({ run: () => defer(() => (subscribed++ === 0 ? attempts : second)) });
      expectObservable(runEach(fake, 'c-1', [inputs[0]!], { retry: 1, run: { output: 'final' } })).toBe('-----(a|)', { a: each(0) });
      return fake;
    });
    expect(client.calls).toEqual([{ kind: 'run', target: 'c-1', input: inputs[0], options: { output: 'final' } }]);
  });

  it('refuses a concurrency below 1', () => {
    const client = fakeClient({});
    expect(() => runEach(client, 'c-1', inputs, { concurrency: 0 })).toThrow(/concurrency/);
    expect(() => runEach(client, 'c-1', inputs, { retry: -1 })).toThrow(/retry/);
  });

  it('refuses inputs that are not a list, iterable or stream of inputs with InvalidArgumentError at the call', () => {
    const client = fakeClient({});
    for (const notInputs of [null, undefined, 42, { variables: {} }]) {
      expect(() => runEach(client, 'c-1', notInputs as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'inputs' }));
    }
    expect(client.calls).toEqual([]);
  });

  it('refuses null options from JavaScript with InvalidArgumentError, as thenRun does', () => {
    const client = fakeClient({});
    expect(() => runEach(client, 'c-1', inputs, null as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    expect(() => thenRun(client, 'c-2', () => ({}), null as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    expect(client.calls).toEqual([]);
  });

  it('refuses what is not a client with InvalidArgumentError at the call (runEach, thenRun, runPipeline), not a TypeError once it runs', () => {
    for (const notAClient of [undefined, null, {}, 'rf_key']) {
      const client = notAClient as never;
      expect(() => runEach(client, 'c-1', inputs)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'client' }));
      expect(() => thenRun(client, 'c-2', () => ({}))).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'client' }));
      expect(() => runPipeline(client, { steps: { a: { canvasId: 'c-a' } } })).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'client' }));
    }
  });
});
