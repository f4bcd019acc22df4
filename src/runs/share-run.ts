import { asapScheduler, type MonoTypeOperatorFunction, Observable, Subject, type Subscription } from 'rxjs';
import type { FinishedEvent, RunEvent } from './events.js';
import { type RunState, RunStateFold, readingOf, withReading } from './run-state.js';

/** One execution and the subscribers sharing it. */
interface Connection {
  readonly subject: Subject<RunEvent>;
  /** What a newcomer is brought to (see {@link RunStand}). */
  readonly stand: RunStand;
  subscribers: number;
  subscription?: Subscription;
  /** The source's unsubscription once the last subscriber left, held until the current task is over. */
  leaving?: Subscription | undefined;
  /** The run completed: its state is final, and later subscribers get it and complete. */
  completed: boolean;
}

/**
 * How a run stands, for a newcomer: the state of its last reading (a run of this client carries it
 * with its events) — or, for any other event stream, its events folded — and its result once it came.
 */
export class RunStand {
  #reading: { readonly seq: number; readonly state: RunState } | undefined;
  // Only for events that carry no reading: a run of this client is never folded twice.
  #fold: RunStateFold | undefined;
  #result: FinishedEvent | undefined;
  #seen = false;

  /** Takes in one event of the run. */
  see(event: RunEvent): void {
    this.#seen = true;
    if (event.type === 'finished') this.#result = event;
    const reading = readingOf(event);
    if (reading !== undefined) {
      // A reading is complete with its last event.
      // Its place and state only: the reading's events are the past a newcomer never gets.
      if (event === reading.events.at(-1)) this.#reading = { seq: reading.seq, state: reading.state };
      this.#fold = undefined;
      return;
    }
    this.#fold ??= this.#reading === undefined ? new RunStateFold() : foldFrom(this.#reading.state);
    this.#fold.apply(event);
  }

  /** The execution's id, once known. */
  get executionId(): string | undefined {
    return this.#state()?.executionId;
  }

  /** The run's `finished` event, once it came. */
  get finished(): FinishedEvent | undefined {
    return this.#result;
  }

  /**
   * What brings a newcomer to how the run stands: one `snapshot` event carrying its state (for a run
   * of this client, with the reading it stands for), and `finished` again once the run has ended, so
   * that the newcomer's stream still ends with it. Nothing before the first event.
   */
  catchUp(): readonly RunEvent[] {
    const state = this.#state();
    if (state === undefined) return [];
    const snapshot: RunEvent = { type: 'snapshot', executionId: state.executionId ?? state.result?.executionId ?? '', state };
    // A copy of `finished`: the run's own event keeps its reading.
    const events = this.#result === undefined ? [snapshot] : [snapshot, { ...this.#result }];
    if (this.#fold === undefined && this.#reading !== undefined) withReading({ seq: this.#reading.seq, state, events });
    return events;
  }

  #state(): RunState | undefined {
    if (!this.#seen) return undefined;
    return this.#fold?.state ?? this.#reading?.state;
  }
}

function foldFrom(state: RunState): RunStateFold {
  const fold = new RunStateFold();
  fold.apply({ type: 'snapshot', executionId: state.executionId ?? '', state });
  return fold;
}

/**
 * Shares one run among many subscribers: the first subscription starts the execution, later ones
 * join it and first receive one `snapshot` event carrying its current state (the state after its last
 * read, as every subscriber's `toRunState()` showed it) instead of every event so far. Only when the
 * last subscriber leaves, and none came back by the end of the current task, is the source
 * unsubscribed — and so the execution aborted. Once the run has
 * completed with its result, a later subscriber gets its final state (a `snapshot`, then `finished`) and
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
      const connection: Connection = current ?? { subject: new Subject(), stand: new RunStand(), subscribers: 0, completed: false };
      current = connection;
      for (const event of connection.stand.catchUp()) subscriber.next(event);
      if (connection.completed) {
        subscriber.complete();
        return undefined;
      }
      // A subscriber that had enough of the snapshot (`take(1)`) never joins.
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
          connection.stand.see(event);
          connection.subject.next(event);
        },
        error: (error: unknown) => {
          leave();
          connection.subject.error(error);
        },
        complete: () => {
          // Ended with its result: final, kept for later subscribers. Cut short upstream (a
          // `takeUntil` before `shareRun`): the execution was left, so the next subscriber starts anew.
          if (connection.stand.finished === undefined) leave();
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
