import { Observable, Subject, Subscription, tap, timer } from 'rxjs';
import type { WorkflowPlan } from '../domain/model.js';
import { abortInBackground, type ExecutionSource, type StartProgress, waitOutUnsentStart } from './execution-source.js';
import { withExecutionId } from './execution-error.js';
import { pollExecution } from './poll-execution.js';
import { reducerShell } from './run-machine.js';
import { initialRun, type LifecycleCommand, reduceRun, type RunControl, type RunRules } from './run-machine.js';
import type { RunSettings } from './run-options.js';
import { RunReader, withReading } from './run-state.js';
import type { RunEvent } from './events.js';

/** Where a run's execution comes from: a start of its own, or an existing one to follow. */
export type RunTarget =
  | {
      readonly kind: 'start';
      readonly canvasId: string;
      /** The start request, made per subscription; unsubscribing takes it back while nothing of it is on its way. */
      readonly start: () => Observable<StartProgress>;
      /** The workflow's task nodes, once the start read its plan (`checkVariables`; see {@link notingPlan}). */
      readonly plannedTasks?: () => readonly { readonly nodeId: string }[] | undefined;
    }
  | { readonly kind: 'watch'; readonly executionId: string };

/**
 * `source` with its plan reads noted: a start that checks its variables reads the workflow's plan
 * first, whose tasks are the run's task nodes (service.md §5.2), so its progress has its total from
 * the start. `tasks` is per start: make one for each.
 */
export function notingPlan(source: ExecutionSource): { readonly source: ExecutionSource; readonly tasks: () => readonly { readonly nodeId: string }[] | undefined } {
  const { plan } = source;
  if (plan === undefined) return { source, tasks: () => undefined };
  let tasks: readonly { readonly nodeId: string }[] | undefined;
  const noting = (canvasId: string): Observable<WorkflowPlan> =>
    plan(canvasId).pipe(
      tap((found) => {
        tasks = found.tasks.map((task) => ({ nodeId: task.id }));
      }),
    );
  return { source: { ...source, plan: noting }, tasks: () => tasks };
}

/**
 * One subscription to a run: the shell of `reduceRun` (run-machine.ts, where the rules are). It turns
 * the subscriber, the signal, the deadline and `control` into events, and the machine's commands into
 * the start's and the poll's subscriptions, background aborts and readings (`RunReading`: one per read
 * that changed something, `seq` 1, 2, 3…), whose events it emits, each carrying its reading (`readingOf`).
 */
export function runLifecycle(source: ExecutionSource, target: RunTarget, settings: RunSettings, control?: Observable<RunControl>): Observable<RunEvent> {
  return new Observable<RunEvent>((subscriber) => {
    const reader = new RunReader(settings.scheduler);
    const listening = new Subscription();
    let starting: Subscription | undefined;
    let following: Subscription | undefined;
    // Cuts the poll's wait short once an abort answered.
    const readNow = new Subject<void>();

    const perform = (command: LifecycleCommand): void => {
      switch (command.type) {
        case 'start':
          // A subscriber that left on an event of this same batch gets nothing new; the machine hears of it next.
          if (subscriber.closed || target.kind !== 'start') return;
          starting = waitOutUnsentStart(target.start, settings).subscribe({
            next: (progress) => {
              dispatch(progress);
            },
            error: (error: unknown) => {
              dispatch({ type: 'start-failed', error });
            },
          });
          return;
        case 'drop-start':
          starting?.unsubscribe();
          return;
        case 'follow':
          if (subscriber.closed) return;
          following = pollExecution(source, { ...settings, executionId: command.executionId, canvasId: command.canvasId, startedStatus: command.startedStatus, readNow }).subscribe({
            next: (read) => {
              dispatch({ type: 'poll-read', read });
            },
            error: (error: unknown) => {
              dispatch({ type: 'poll-error', error });
            },
            complete: () => {
              dispatch({ type: 'poll-complete' });
            },
          });
          return;
        case 'stop-following':
          following?.unsubscribe();
          return;
        case 'abort':
          abortInBackground(source, command.executionId, settings, () => {
            dispatch({ type: 'abort-answered' });
          });
          return;
        case 'read-now':
          readNow.next();
          return;
        case 'emit': {
          const planned = target.kind === 'start' ? target.plannedTasks?.() : undefined;
          if (planned !== undefined) reader.knowPlannedTasks(planned);
          for (const event of withReading(reader.read(command.events, command.tasks)).events) {
            // A subscriber that left before `finished` left a run not over (run-machine.ts, `ending`).
            if (subscriber.closed) return;
            if (event.type === 'finished') dispatch({ type: 'finished-delivered' });
            subscriber.next(event);
          }
          return;
        }
        case 'complete':
          subscriber.complete();
          return;
        case 'error':
          subscriber.error(command.executionId === undefined ? command.error : withExecutionId(command.error, command.executionId));
          return;
        default:
          command satisfies never;
      }
    };
    const rules: RunRules = {
      origin: target.kind === 'start' ? { kind: 'start', canvasId: target.canvasId } : target,
      abortOnUnsubscribe: settings.abortOnUnsubscribe,
      failOnWorkflowError: settings.failOnWorkflowError,
      onFailedBranches: settings.onFailedBranches,
      timeoutMs: settings.timeoutMs,
    };
    const dispatch = reducerShell(reduceRun, initialRun(rules), perform);

    const { signal, timeoutMs } = settings;
    if (signal?.aborted === true) dispatch({ type: 'signal', reason: signal.reason });
    else if (signal !== undefined) {
      const onAbort = (): void => {
        dispatch({ type: 'signal', reason: signal.reason });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      listening.add(() => {
        signal.removeEventListener('abort', onAbort);
      });
    }
    if (timeoutMs !== undefined) {
      listening.add(
        timer(timeoutMs, settings.scheduler).subscribe(() => {
          dispatch({ type: 'deadline' });
        }),
      );
    }
    dispatch({ type: 'subscribe' });
    const { detach } = settings;
    if (detach?.aborted === true) dispatch({ type: 'control', control: 'detach' });
    else if (detach !== undefined) {
      const onDetach = (): void => {
        dispatch({ type: 'control', control: 'detach' });
      };
      detach.addEventListener('abort', onDetach, { once: true });
      listening.add(() => {
        detach.removeEventListener('abort', onDetach);
      });
    }
    if (control !== undefined) {
      listening.add(
        control.subscribe((order) => {
          dispatch({ type: 'control', control: order });
        }),
      );
    }
    return () => {
      listening.unsubscribe();
      dispatch({ type: 'unsubscribe' });
    };
  });
}
