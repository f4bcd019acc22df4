import { Observable, Subscription, timer } from 'rxjs';
import type { ExecutionStatus, RunResult, StartedExecution } from '../http/model.js';
import { RunTimeoutError, WorkflowFailedError } from '../errors/run-errors.js';
import { abortInBackground } from './background-abort.js';
import type { RunEvent } from './events.js';
import type { ExecutionSource } from './execution-source.js';
import { withExecutionId } from './execution-error.js';
import { pollExecution } from './poll-execution.js';
import type { RunSettings } from './run-options.js';

/** Where a run's execution comes from: a start of its own, or an existing one to follow. */
export type RunTarget =
  | {
      readonly kind: 'start';
      readonly canvasId: string;
      /** The start request; `withdraw` takes it back while nothing of it is on its way (`StartOptions.withdraw`). */
      readonly start: (withdraw: AbortSignal) => Observable<StartedExecution>;
    }
  | { readonly kind: 'watch'; readonly executionId: string };

/**
 * The life of one subscription to a run: start (or attach), follow, end — and the rules of DESIGN.md
 * for how it ends. `finished`/finish completes; `finished`/failed errors with `WorkflowFailedError`
 * unless `failOnWorkflowError` is false; a failed request errors carrying the `executionId` and leaves
 * the execution alone. Leaving early (unsubscribe, `signal`, `timeoutMs`) aborts the execution once,
 * in the background; when that happens while the start is in flight, the start is let through (the
 * execution may exist anyway) and aborted as soon as its id arrives, with nothing more emitted. A start
 * not sent yet (waiting for the request budget, or to retry) is withdrawn instead: nothing to abort.
 */
export function runLifecycle(source: ExecutionSource, target: RunTarget, settings: RunSettings): Observable<RunEvent> {
  return new Observable<RunEvent>((subscriber) => {
    const owned = new Subscription();
    let executionId = target.kind === 'watch' ? target.executionId : undefined;
    let result: RunResult | undefined;
    // The run ended on its own terms (finished, or a failure that must not abort): nothing to abort.
    let over = false;
    let abortWanted = false;
    let abortSent = false;

    const sendAbortOnceKnown = (): void => {
      if (abortSent || executionId === undefined) return;
      abortSent = true;
      abortInBackground(source, executionId, settings);
    };
    const abortExecution = (): void => {
      if (over) return;
      abortWanted = true;
      sendAbortOnceKnown();
    };
    const end = (error: unknown): void => {
      over = true;
      subscriber.error(error);
    };

    const follow = (id: string, canvasId: string | undefined, startedStatus: ExecutionStatus | undefined): void => {
      const poll = pollExecution(source, { ...settings, executionId: id, canvasId, startedStatus });
      owned.add(
        poll.subscribe({
          next: (event) => {
            if (event.type === 'finished') {
              // Before delivering it: a subscriber leaving on `finished` must not abort a finished run.
              over = true;
              result = event.result;
            }
            subscriber.next(event);
          },
          error: (error: unknown) => {
            end(withExecutionId(error, id));
          },
          complete: () => {
            if (result?.status === 'failed' && settings.failOnWorkflowError) subscriber.error(new WorkflowFailedError(result));
            else subscriber.complete();
          },
        }),
      );
    };

    const { signal, timeoutMs } = settings;
    if (signal?.aborted === true) {
      end(signal.reason);
      return undefined;
    }
    if (signal !== undefined) {
      const onAbort = (): void => {
        if (over) return;
        if (settings.abortOnUnsubscribe) abortExecution();
        end(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      owned.add(() => {
        signal.removeEventListener('abort', onAbort);
      });
    }
    if (timeoutMs !== undefined) {
      owned.add(
        timer(timeoutMs, settings.scheduler).subscribe(() => {
          if (over) return;
          abortExecution();
          end(new RunTimeoutError(timeoutMs, executionId));
        }),
      );
    }

    if (target.kind === 'watch') {
      follow(target.executionId, undefined, undefined);
    } else {
      let started = false;
      const withdraw = new AbortController();
      const starting: Subscription = target.start(withdraw.signal).subscribe({
        next: (execution) => {
          started = true;
          executionId = execution.executionId;
          if (abortWanted) {
            sendAbortOnceKnown();
            return;
          }
          if (subscriber.closed) return;
          subscriber.next({ type: 'started', executionId, canvasId: target.canvasId, status: execution.status });
          follow(execution.executionId, target.canvasId, execution.status);
        },
        error: (error: unknown) => {
          started = true;
          end(error);
        },
      });
      owned.add(() => {
        if (started) return;
        // An abort is coming: let a start already sent finish, so that it can be aborted once its id
        // arrives; one not sent yet (queued in the budget, or waiting to retry) is withdrawn, and its
        // call ends with nothing to abort.
        if (abortWanted) withdraw.abort();
        else starting.unsubscribe();
      });
    }

    return () => {
      if (settings.abortOnUnsubscribe) abortExecution();
      owned.unsubscribe();
    };
  });
}
