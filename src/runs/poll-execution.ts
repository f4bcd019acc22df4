import { Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { readDueAt } from '../budget/scheduler.js';
import type { ReadNeed } from '../domain/budget.js';
import type { DurationModel } from '../domain/durations.js';
import type { ExecutionStatus, Logger, OutputNode } from '../domain/model.js';
import type { ConnectionEvent, RunEvent } from './events.js';
import type { ExecutionSource, ReadOptions } from './execution-source.js';
import { afterFailure, type Outage, outlasted } from './outage.js';
import { type CadenceBounds, initialPoll, type OutputMode, type PollCommand, type PollInput, reducePoll } from './poll-plan.js';
import { reducerShell } from './run-machine.js';
import type { FailedBranches } from './run-lifecycle.js';

/** One read's events, in order, and the task nodes (service.md §4.2) once an output read listed them. */
export interface PollRead {
  readonly events: readonly RunEvent[];
  readonly tasks?: readonly OutputNode[];
}

export interface PollSettings {
  readonly executionId: string;
  readonly canvasId?: string | undefined;
  /**
   * The status the start answered. Without one (a `watch`), the first status read is announced as
   * the `started` event.
   */
  readonly startedStatus?: ExecutionStatus | undefined;
  readonly bounds: CadenceBounds;
  readonly output: OutputMode;
  readonly scheduler: SchedulerLike;
  readonly random: () => number;
  /** Learned node durations: reads are timed by them, and the run's durations recorded at its end. */
  readonly durations?: DurationModel | undefined;
  /**
   * The request budget's scheduler of reads (`AccountBudget.needRead`): the run registers each read's
   * need there and asks at once, and the budget holds the read until its turn. Without it the run
   * waits until the need is due (`readDueAt`, the same rule) and then reads.
   */
  readonly needRead?: ((executionId: string, need: ReadNeed) => () => void) | undefined;
  readonly logger?: Logger | undefined;
  /**
   * Cuts the wait before the next read short with a status read: after an abort, the end is read at
   * once (through an outage, the failed read is made again at once). From then on the run's reads are
   * urgent (`ReadOptions.urgent`), ahead of other runs' in the request budget, and a read still waiting
   * in it is asked again as urgent: someone waits on the abort's confirmation.
   */
  readonly readNow?: ReadNow | undefined;
  readonly onFailedBranches?: FailedBranches;
  /** How long an outage is read through (`RunOptions.outageMs`); default: none, the first failed read errors. */
  readonly outageMs?: number | undefined;
}

/**
 * A run's way to tell its poll to read now (`PollSettings.readNow`): the poll listens while it lasts.
 * A plain callback, not a `Subject`: every watched run holds one, and most never use it.
 */
export class ReadNow {
  #listener: (() => void) | undefined;

  /** The poll's listener, or `undefined` once the poll is over. */
  listen(listener: (() => void) | undefined): void {
    this.#listener = listener;
  }

  /** Tells the poll, if one listens. */
  readNow(): void {
    this.#listener?.();
  }
}

/**
 * Follows one execution until it is terminal: the shell of `reducePoll` (poll-plan.ts, where the
 * rules are). It waits on `scheduler`, makes the reads the plan asks for and feeds their answers back,
 * with the time and a jitter draw. A read that fails for an outage (outage.ts) is made again with
 * backoff, each time through the source (so through the request budget), for up to `outageMs`; each
 * failure and the first success after them are told as `connection` events. Other errors of the source,
 * and the last one of an outage too long, pass through; the caller decides what they mean. It emits
 * one `PollRead` per read that changed something, and one per `connection` event.
 */
export function pollExecution(source: ExecutionSource, settings: PollSettings): Observable<PollRead> {
  const { executionId, scheduler, canvasId, durations } = settings;
  // Learned durations: estimates of this run's workflow; a watch that does not know its canvas has none.
  const estimateOf = canvasId === undefined || durations === undefined ? undefined : (nodeId: string) => durations.estimate(canvasId, nodeId);
  return new Observable<PollRead>((subscriber) => {
    // The one timer, or the one read, the plan is waiting on.
    let pending: Subscription | undefined;
    // The outage the reads are going through, if they are failing, and the wait before the next attempt.
    let outage: Outage | undefined;
    let again: Subscription | undefined;
    // Makes that next attempt at once (an abort answered: the service is back).
    let retryNow: (() => void) | undefined;
    // The read the plan waits on, to ask again (urgent) when an abort answered while it waited.
    let inFlight: (() => void) | undefined;
    // The abort answered: someone waits on its confirmation (see `PollSettings.readNow`).
    let urgent = false;
    // Withdraws the need registered with the budget for the next read, should that read not ask.
    let withdrawNeed: (() => void) | undefined;
    const connection = (reconnecting: ConnectionEvent['reconnecting']): void => {
      subscriber.next({ events: [{ type: 'connection', executionId, ...(reconnecting === undefined ? {} : { reconnecting }) }] });
    };
    const answer = <T>(read: () => Observable<T>, input: (value: T, at: number, random: number) => PollInput): Subscription => {
      inFlight = () => {
        pending?.unsubscribe();
        pending = answer(read, input);
      };
      // The answer taken in by `next` itself, not a `map`: an Observable and a subscriber fewer per read.
      return read().subscribe({
        next: (value) => {
          const event = input(value, scheduler.now(), settings.random());
          inFlight = undefined;
          if (outage !== undefined) {
            outage = undefined;
            connection(undefined);
          }
          dispatch(event);
        },
        error: (error: unknown) => {
          inFlight = undefined;
          const now = scheduler.now();
          const step = afterFailure(outage, error, now, settings.random(), settings.outageMs ?? 0);
          if (step.kind === 'give-up') {
            subscriber.error(step.outage === undefined ? error : outlasted(error, step.outage, now));
            return;
          }
          outage = step.outage;
          connection({ attempts: outage.attempts, failingForMs: now - outage.since, error: outage.error });
          // The subscriber may have left on that event.
          if (subscriber.closed) return;
          // The same read again, after the wait: the plan still waits on its answer. Kept apart from
          // `pending`, which a read that failed at once is about to be assigned.
          const retry = (): void => {
            again?.unsubscribe();
            again = undefined;
            pending = answer(read, input);
          };
          again = scheduler.schedule(retry, step.delayMs);
          retryNow = retry;
        },
      });
    };

    // Read when the read is made, so that one asked again after the abort goes as urgent.
    const readOptions = (): ReadOptions | undefined => (urgent ? { urgent } : undefined);
    const perform = (command: PollCommand): void => {
      // Whatever the plan asked before it heard the subscriber leave is not begun.
      if (subscriber.closed) return;
      switch (command.type) {
        case 'wait': {
          pending?.unsubscribe();
          const dueAt = readDueAt(command.need, undefined);
          if (settings.needRead !== undefined) {
            // The budget holds the read until its turn: it asks now. The plan chooses the read for
            // the moment it wished it (an output read alone is spaced by then).
            withdrawNeed?.();
            withdrawNeed = settings.needRead(executionId, command.need);
            dispatch({ type: 'wake', at: Math.max(scheduler.now(), dueAt) });
            return;
          }
          // The scheduler's own action, not `timer()`: no Observable and subscriber made per wait.
          pending = scheduler.schedule(() => {
            dispatch({ type: 'wake', at: scheduler.now() });
          }, Math.max(0, dueAt - scheduler.now()));
          return;
        }
        case 'read':
          pending?.unsubscribe();
          if (command.need !== undefined && settings.needRead !== undefined) {
            withdrawNeed?.();
            withdrawNeed = settings.needRead(executionId, command.need);
          }
          pending =
            command.endpoint === 'status'
              ? answer(
                  () => source.status(executionId, readOptions()),
                  (snapshot, at, random) => ({ type: 'status', snapshot, at, random }),
                )
              : answer(
                  () => source.output(executionId, readOptions()),
                  (output, at, random) => ({ type: 'output', output, at, random }),
                );
          return;
        case 'emit':
          subscriber.next(command.view.outputNodes.length === 0 ? { events: command.events } : { events: command.events, tasks: command.view.outputNodes });
          return;
        case 'warn':
          settings.logger?.warn(command.warning.message, command.warning.meta);
          return;
        case 'learn':
          for (const { nodeId, durationMs } of command.durations) if (canvasId !== undefined) settings.durations?.record(canvasId, nodeId, durationMs);
          return;
        case 'end':
          subscriber.complete();
          return;
        default:
          command satisfies never;
      }
    };
    const rules = { executionId, canvasId, bounds: settings.bounds, output: settings.output, onFailedBranches: settings.onFailedBranches ?? 'leave', estimateOf };
    const dispatch = reducerShell(reducePoll, initialPoll(rules, settings.startedStatus), perform);
    dispatch({ type: 'begin', at: scheduler.now() });
    settings.readNow?.listen(() => {
      urgent = true;
      if (again !== undefined && !again.closed) retryNow?.();
      // A read waiting (in the request budget, likely behind other runs' reads): the same read, asked
      // again as urgent; it was asked before the abort, so its answer could not confirm it anyway.
      else {
        inFlight?.();
        dispatch({ type: 'poke' });
      }
    });
    return () => {
      settings.readNow?.listen(undefined);
      pending?.unsubscribe();
      again?.unsubscribe();
      withdrawNeed?.();
    };
  });
}
