import type { Observable} from 'rxjs';
import { defer, of, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/domain/model.js';
import { InvalidArgumentError } from '../../src/errors/validation-errors.js';
import { NetworkError } from '../../src/errors/transport-errors.js';
import { WorkflowFailedError } from '../../src/errors/run-errors.js';
import { retryFailedWorkflow } from '../../src/pipeline/retry-failed-workflow.js';

const failed = (executionId: string): RunResult => ({ executionId, status: 'failed', endedBy: 'failed', nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] });

/** A run that fails its first `failures` subscriptions (each a new execution), then finishes. */
function flaky(failures: number): { readonly run$: Observable<string>; readonly subscriptions: () => number } {
  let subscriptions = 0;
  const run$ = defer(() => {
    subscriptions += 1;
    return subscriptions <= failures ? throwError(() => new WorkflowFailedError(failed(`we-${subscriptions}`))) : of(`we-${subscriptions} finished`);
  });
  return { run$, subscriptions: () => subscriptions };
}

/** What `source` gave by the end of the current task: no timer of any clock may stand between two attempts. */
function settledAtOnce<T>(source: Observable<T>): { values: T[]; error?: unknown; complete: boolean } {
  const seen: { values: T[]; error?: unknown; complete: boolean } = { values: [], complete: false };
  source.subscribe({ next: (value) => seen.values.push(value), error: (error: unknown) => (seen.error = error), complete: () => (seen.complete = true) });
  return seen;
}

describe('retryFailedWorkflow', () => {
  it('runs a failed workflow again, at once, up to count more times', () => {
    const { run$, subscriptions } = flaky(2);
    expect(settledAtOnce(run$.pipe(retryFailedWorkflow(2)))).toEqual({ values: ['we-3 finished'], complete: true });
    expect(subscriptions()).toBe(3);
  });

  it('errors with the last failure once the count is spent', () => {
    const { run$, subscriptions } = flaky(5);
    const seen = settledAtOnce(run$.pipe(retryFailedWorkflow(1)));
    expect(seen.error).toBeInstanceOf(WorkflowFailedError);
    expect((seen.error as WorkflowFailedError).executionId).toBe('we-2');
    expect(subscriptions()).toBe(2);
  });

  it('never runs again after another error: its execution may still be running', () => {
    let subscriptions = 0;
    const run$ = defer(() => {
      subscriptions += 1;
      return throwError(() => new NetworkError({ endpoint: 'status', cause: new Error('socket hang up') }));
    });
    expect(settledAtOnce(run$.pipe(retryFailedWorkflow(3))).error).toBeInstanceOf(NetworkError);
    expect(subscriptions).toBe(1);
  });

  it('refuses a count that is not a whole number ≥ 0', () => {
    for (const count of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => retryFailedWorkflow(count)).toThrow(InvalidArgumentError);
  });
});
