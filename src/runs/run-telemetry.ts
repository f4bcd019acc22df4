import { Observable, type SchedulerLike } from 'rxjs';
import type { RunEvent } from './events.js';
import { type ExecutionSource, withTelemetryParent } from './execution-source.js';

/**
 * A run, a watch or a run handle about to follow an execution.
 *
 * @example
 * ```ts
 * const start: RunTelemetryStart = { kind: 'run', canvasId: 'c-1', at: scheduler.now() };
 * ```
 */
export interface RunTelemetryStart {
  readonly kind: 'run' | 'watch';
  readonly canvasId?: string;
  readonly executionId?: string;
  /** What the caller gave as the parent of its telemetry (`RunOptions.telemetryParent`), opaque to the client. */
  readonly parent?: unknown;
  /** When it was subscribed, on the client's scheduler. */
  readonly at: number;
}

/**
 * How a run's subscription ended: `completed` and `error` as its Observable did, `unsubscribed` when
 * its subscriber left first.
 *
 * @example
 * ```ts
 * observer.end({ at: scheduler.now(), outcome: 'error', error });
 * ```
 */
export interface RunTelemetryEnd {
  readonly at: number;
  readonly outcome: 'completed' | 'error' | 'unsubscribed';
  readonly error?: unknown;
}

/**
 * The observer of one run, handed back by {@link RunTelemetryHook.run}.
 *
 * @example
 * ```ts
 * const observer: RunTelemetry = { parent: runContext, event: (event) => log(event.type), end: () => undefined };
 * ```
 */
export interface RunTelemetry {
  /** The parent the run's requests are reported under (`RequestTelemetryStart.parent`). */
  readonly parent?: unknown;
  /** Every event of the run, with the time it was emitted on the client's scheduler. */
  event(event: RunEvent, at: number): void;
  /** Told once, when the run's subscription ends. */
  end(end: RunTelemetryEnd): void;
}

/**
 * Where a client reports its runs, watches and run handles.
 *
 * @example
 * ```ts
 * const hook: RunTelemetryHook = { run: (start) => ({ event: () => undefined, end: (end) => console.log(start.kind, end.outcome) }) };
 * ```
 */
export interface RunTelemetryHook {
  run(start: RunTelemetryStart): RunTelemetry;
}

/**
 * A run followed under telemetry: `follow` makes the run over a view of `source` whose requests are
 * reported under the run, and the hook hears of the subscription, every event and the end. Without a
 * hook, it is `follow(source)` and nothing else.
 */
export function observedRun(
  hook: RunTelemetryHook | undefined,
  source: ExecutionSource,
  start: Omit<RunTelemetryStart, 'at'>,
  scheduler: SchedulerLike,
  follow: (source: ExecutionSource) => Observable<RunEvent>,
): Observable<RunEvent> {
  if (hook === undefined) return follow(source);
  return new Observable<RunEvent>((subscriber) => {
    const observer = hook.run({ ...start, at: scheduler.now() });
    let ended = false;
    const end = (outcome: RunTelemetryEnd['outcome'], error?: unknown): void => {
      if (ended) return;
      ended = true;
      observer.end({ at: scheduler.now(), outcome, ...(outcome === 'error' ? { error } : {}) });
    };
    const traced = observer.parent === undefined ? source : withTelemetryParent(source, observer.parent);
    const subscription = follow(traced).subscribe({
      next: (event) => {
        observer.event(event, scheduler.now());
        subscriber.next(event);
      },
      error: (error: unknown) => {
        end('error', error);
        subscriber.error(error);
      },
      complete: () => {
        end('completed');
        subscriber.complete();
      },
    });
    return () => {
      subscription.unsubscribe();
      end('unsubscribed');
    };
  });
}
