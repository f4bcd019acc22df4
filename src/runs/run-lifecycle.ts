import { Observable, Subject, Subscription, timer } from 'rxjs';
import type { ExecutionStatus, RunEnding, RunResult, StartedExecution } from '../domain/model.js';
import { RunTimeoutError, WorkflowFailedError } from '../errors/run-errors.js';
import { abortInBackground } from './background-abort.js';
import type { FinishedEvent, RunEvent } from './events.js';
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
 * What a run handle asks of its run while it lasts. `cancel` and `timeout` abort the execution (or
 * withdraw a start not sent yet) and go on following it to its end, so that the last `finished` says
 * how it ended (`endedBy: 'aborted' | 'timeout'`); `detach` stops following and leaves the execution
 * running, once the start has answered.
 */
export type RunControl = 'cancel' | 'timeout' | 'detach';

function isTerminal(status: ExecutionStatus): boolean {
  return status === 'finish' || status === 'failed';
}

/**
 * The result of a run stopped before its start was sent: no execution exists, so it has no id
 * (`executionId: ''`), no nodes and no output.
 */
function withdrawnResult(canvasId: string, endedBy: RunEnding): RunResult {
  return { executionId: '', canvasId, status: 'failed', endedBy, nodes: [], output: [], files: [], failedNodes: [], runningNodes: [] };
}

/**
 * The life of one subscription to a run: start (or attach), follow, end — and the rules of DESIGN.md
 * for how it ends. `finished`/finish completes; `finished`/failed errors with `WorkflowFailedError`
 * unless `failOnWorkflowError` is false; a failed request errors carrying the `executionId` and leaves
 * the execution alone. Leaving early (unsubscribe, `signal`, `timeoutMs`) aborts the execution once,
 * in the background; when that happens while the start is in flight, the start is let through (the
 * execution may exist anyway) and aborted as soon as its id arrives, with nothing more emitted. A start
 * not sent yet (waiting for the request budget, or to retry) is withdrawn instead: nothing to abort.
 * `control` is how a run handle steers the run (see `RunControl`).
 */
export function runLifecycle(source: ExecutionSource, target: RunTarget, settings: RunSettings, control?: Observable<RunControl>): Observable<RunEvent> {
  return new Observable<RunEvent>((subscriber) => {
    const owned = new Subscription();
    let executionId = target.kind === 'watch' ? target.executionId : undefined;
    let result: RunResult | undefined;
    // The run ended on its own terms (finished, or a failure that must not abort): nothing to abort.
    let over = false;
    let abortWanted = false;
    let abortSent = false;
    // Set by `control`: why this client stopped the execution, and whether to follow it at all.
    let stoppedBy: 'aborted' | 'timeout' | undefined;
    let endedBeforeStop = false;
    let detached = false;
    let following: Subscription | undefined;
    // After a stop's abort answered, the next read comes at once rather than at the cadence's pace.
    const readNow = new Subject<void>();

    const sendAbortOnceKnown = (): void => {
      if (abortSent || executionId === undefined) return;
      abortSent = true;
      abortInBackground(source, executionId, settings, () => {
        readNow.next();
      });
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

    /** The `finished` event as this client saw the end: an execution that failed after our abort was aborted. */
    const ending = (event: FinishedEvent): FinishedEvent =>
      stoppedBy === undefined || endedBeforeStop || event.result.status !== 'failed' ? event : { ...event, result: { ...event.result, endedBy: stoppedBy } };

    const follow = (id: string, canvasId: string | undefined, startedStatus: ExecutionStatus | undefined): void => {
      const poll = pollExecution(source, { ...settings, executionId: id, canvasId, startedStatus, readNow });
      following = poll.subscribe({
        next: (event) => {
          if (event.type === 'finished') {
            // Before delivering it: a subscriber leaving on `finished` must not abort a finished run.
            over = true;
            const ended = ending(event);
            result = ended.result;
            // PROTOCOL §3.3, §3.5: branches still running after the failure spend credits; abort them once.
            if (settings.onFailedBranches === 'abort' && ended.result.runningNodes.length > 0 && !abortSent) {
              abortSent = true;
              abortInBackground(source, id, settings);
            }
            subscriber.next(ended);
            return;
          }
          if ((event.type === 'status' || event.type === 'started') && isTerminal(event.status) && stoppedBy === undefined) endedBeforeStop = true;
          subscriber.next(event);
        },
        error: (error: unknown) => {
          end(withExecutionId(error, id));
        },
        complete: () => {
          if (result?.endedBy === 'failed' && settings.failOnWorkflowError) subscriber.error(new WorkflowFailedError(result));
          else subscriber.complete();
        },
      });
      owned.add(following);
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

    // How a stop reaches a start that has not answered (used only while the execution id is unknown).
    let withdrawStart: (() => void) | undefined;

    if (target.kind === 'watch') {
      follow(target.executionId, undefined, undefined);
    } else {
      let started = false;
      const withdraw = new AbortController();
      const starting: Subscription = target.start(withdraw.signal).subscribe({
        next: (execution) => {
          started = true;
          executionId = execution.executionId;
          if (abortWanted) sendAbortOnceKnown();
          // Torn down while the start was on its way: its abort (if wanted) is all that is left to do.
          if (subscriber.closed) return;
          subscriber.next({ type: 'started', executionId, canvasId: target.canvasId, status: execution.status });
          if (isTerminal(execution.status) && stoppedBy === undefined) endedBeforeStop = true;
          if (detached) {
            over = true;
            subscriber.complete();
          } else follow(execution.executionId, target.canvasId, execution.status);
        },
        error: (error: unknown) => {
          started = true;
          if (stoppedBy !== undefined && withdraw.signal.aborted && error === withdraw.signal.reason) {
            // Withdrawn by a stop before it was sent: no execution exists, and the run ends here.
            over = true;
            result = withdrawnResult(target.canvasId, stoppedBy);
            subscriber.next({ type: 'finished', executionId: '', result });
            subscriber.complete();
            return;
          }
          end(error);
        },
      });
      withdrawStart = () => {
        withdraw.abort(new DOMException('The run was cancelled before its start was sent', 'AbortError'));
      };
      owned.add(() => {
        if (started) return;
        // An abort is coming: let a start already sent finish, so that it can be aborted once its id
        // arrives; one not sent yet (queued in the budget, or waiting to retry) is withdrawn, and its
        // call ends with nothing to abort.
        if (abortWanted) withdraw.abort();
        else starting.unsubscribe();
      });
    }

    const steer = (order: RunControl): void => {
      if (over || detached) return;
      if (order === 'detach') {
        detached = true;
        // A start on its way goes through (the execution keeps running) and the run ends with its id.
        if (executionId === undefined) return;
        over = true;
        following?.unsubscribe();
        subscriber.complete();
        return;
      }
      if (stoppedBy !== undefined) return;
      stoppedBy = order === 'cancel' ? 'aborted' : 'timeout';
      abortWanted = true;
      if (executionId === undefined) withdrawStart?.();
      else sendAbortOnceKnown();
    };
    if (control !== undefined) owned.add(control.subscribe(steer));

    return () => {
      if (settings.abortOnUnsubscribe) abortExecution();
      owned.unsubscribe();
    };
  });
}
