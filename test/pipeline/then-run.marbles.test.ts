import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '../../src/errors/run-errors.js';
import { outputText } from '../../src/pipeline/output-text.js';
import { thenRun } from '../../src/pipeline/then-run.js';
import type { RunEvent } from '../../src/runs/events.js';
import { fakeClient, finishedEvent, resultOf, startedEvent, testScheduler } from './fake-client.js';

const first = resultOf('we-1', { text: 'hello' });
const second = resultOf('we-2', { text: 'bonjour' });
const values = { s: startedEvent('we-1'), f: finishedEvent(first), t: startedEvent('we-2'), g: finishedEvent(second) };

describe('thenRun in virtual time', () => {
  it('starts the next run with the input built from the result, once the previous run completed', () => {
    const client = testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const next = cold<RunEvent>('t----(g|)', values);
      const fake = fakeClient({ run: () => next });
      const chain = cold<RunEvent>('s--(f|)', values).pipe(thenRun(fake, 'c-2', (result) => ({ variables: { text: outputText(result) } }), { output: 'final' }));
      expectObservable(chain).toBe('s--(ft)-(g|)', values);
      expectSubscriptions(next.subscriptions).toBe('---^----!');
      return fake;
    });
    expect(client.calls).toEqual([{ kind: 'run', target: 'c-2', input: { variables: { text: 'hello' } }, options: { output: 'final' } }]);
  });

  it('unsubscribing mid-chain unsubscribes (and so aborts) the running link only', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const upstream = cold<RunEvent>('s-(f|)', values);
      const next = cold<RunEvent>('t------(g|)', values);
      const chain = upstream.pipe(thenRun(fakeClient({ run: () => next }), 'c-2', () => ({})));
      expectObservable(chain, '^----!').toBe('s-(ft)', values);
      expectSubscriptions(upstream.subscriptions).toBe('^-!');
      expectSubscriptions(next.subscriptions).toBe('--^--!');
    });
  });

  it('never starts the next run after a failed workflow', () => {
    const client = testScheduler().run(({ cold, expectObservable }) => {
      const failed = resultOf('we-1', { status: 'failed' });
      const error = new WorkflowFailedError(failed);
      const fake = fakeClient({ run: () => cold<RunEvent>('t|', values) });
      expectObservable(cold<RunEvent>('s-f#', { s: values.s, f: finishedEvent(failed) }, error).pipe(thenRun(fake, 'c-2', () => ({})))).toBe('s-f#', { s: values.s, f: finishedEvent(failed) }, error);
      // With failOnWorkflowError: false upstream, the failed result ends the chain, completed.
      expectObservable(cold<RunEvent>('s-(f|)', { s: values.s, f: finishedEvent(failed) }).pipe(thenRun(fake, 'c-2', () => ({})))).toBe('s-(f|)', { s: values.s, f: finishedEvent(failed) });
      return fake;
    });
    expect(client.calls).toEqual([]);
  });

  it('errors without starting when the input cannot be built', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const fake = fakeClient({ run: () => cold<RunEvent>('t|', values) });
      const problem = new Error('no such file');
      const chain = cold<RunEvent>('s-(f|)', values).pipe(
        thenRun(fake, 'c-2', () => {
          throw problem;
        }),
      );
      expectObservable(chain).toBe('s-(f#)', values, problem);
    });
  });

  it('re-runs the new link with retry, building its input anew', () => {
    const failed = resultOf('we-2', { status: 'failed' });
    const client = testScheduler().run(({ cold, expectObservable }) => {
      let attempts = 0;
      const fake = fakeClient({
        run: () => (attempts++ === 0 ? cold<RunEvent>('t---x--#', { ...values, x: finishedEvent(failed) }, new WorkflowFailedError(failed)) : cold<RunEvent>('t--(g|)', values)),
      });
      const chain = cold<RunEvent>('s-(f|)', values).pipe(thenRun(fake, 'c-2', (result) => ({ variables: { text: outputText(result) } }), { retry: 1, output: 'final' }));
      expectObservable(chain).toBe('s-(ft)x--t--(g|)', { ...values, x: finishedEvent(failed) });
      return fake;
    });
    expect(client.calls.map((call) => call.options)).toEqual([{ output: 'final' }, { output: 'final' }]);
  });
});
