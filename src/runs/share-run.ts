import { asapScheduler, type MonoTypeOperatorFunction, Observable, Subject, type Subscription } from 'rxjs';
import type { RunEvent } from './events.js';
import { replayRunState, RunStateFold } from './run-state.js';

/** One execution and the subscribers sharing it. */
interface Connection {
  readonly subject: Subject<RunEvent>;
  readonly fold: RunStateFold;
  subscribers: number;
  subscription?: Subscription;
  /** The source's unsubscription once the last subscriber left, held until the current task is over. */
  leaving?: Subscription | undefined;
  /** The run completed: its state is final, and later subscribers get it and complete. */
  completed: boolean;
}

/**
 * Shares one run among many subscribers: the first subscription starts the execution, later ones
 * join it and first receive a replay of its current state (see `replayRunState`: `started`, each
 * node's status, each message's full text, each file) instead of every delta so far. Only when the
 * last subscriber leaves, and none came back by the end of the current task, is the source
 * unsubscribed — and so the execution aborted. Once the run has
 * completed with its result, a later subscriber gets its final state (ending with `finished`) and
 * completes: the workflow is never run twice by accident (so `repeat()` after `shareRun()` replays
 * the result; to run the workflow again, subscribe to the run that is not shared).
 * After an error (a failed request, or a failed workflow with `failOnWorkflowError`), or once every
 * subscriber left early, the next subscriber starts a new execution — so `retry()` re-runs.
 *
 * @example
 * ```ts
 * const run$ = client.run('c-1').pipe(shareRun());
 * run$.pipe(toRunState()).subscribe(render);
 * const result = await runResult(run$);
 * ```
 */
export function shareRun(): MonoTypeOperatorFunction<RunEvent> {
  return (source) => {
    let current: Connection | undefined;
    return new Observable<RunEvent>((subscriber) => {
      const connection: Connection = current ?? { subject: new Subject(), fold: new RunStateFold(), subscribers: 0, completed: false };
      current = connection;
      for (const event of replayRunState(connection.fold.state)) subscriber.next(event);
      if (connection.completed) {
        subscriber.complete();
        return undefined;
      }
      // A subscriber that had enough of the replay (`take(1)`) never joins.
      if (subscriber.closed) return undefined;
      connection.subscribers += 1;
      connection.leaving?.unsubscribe();
      connection.leaving = undefined;
      const joined = connection.subject.subscribe(subscriber);
      const leave = (): void => {
        if (current === connection) current = undefined;
      };
      connection.subscription ??= source.subscribe({
        next: (event) => {
          connection.fold.apply(event);
          connection.subject.next(event);
        },
        error: (error: unknown) => {
          leave();
          connection.subject.error(error);
        },
        complete: () => {
          // Ended with its result: final, kept for later subscribers. Cut short upstream (a
          // `takeUntil` before `shareRun`): the execution was left, so the next subscriber starts anew.
          if (connection.fold.result === undefined) leave();
          else connection.completed = true;
          connection.subject.complete();
        },
      });
      return () => {
        joined.unsubscribe();
        connection.subscribers -= 1;
        if (connection.subscribers > 0 || connection.completed) return;
        // A subscriber that comes back in the same task (React's StrictMode mounting twice, a switch
        // from one subscriber to the next) joins the same execution instead of aborting it and starting another.
        connection.leaving ??= asapScheduler.schedule(() => {
          connection.leaving = undefined;
          if (connection.subscribers > 0 || connection.completed) return;
          leave();
          connection.subscription?.unsubscribe();
        });
      };
    });
  };
}
