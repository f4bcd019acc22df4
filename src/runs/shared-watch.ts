import { Observable, type Observer, type Subscriber } from 'rxjs';
import { WorkflowFailedError } from '../errors/run-errors.js';
import type { RunEvent } from './events.js';
import { abortInBackground, type ExecutionSource, runLifecycle, type RunSettings } from './run-lifecycle.js';
import type { RunHub } from './run-hub.js';

/**
 * A watch through a hub: every watch of the execution in the hub (and a run of it that leads it)
 * shares one poll, started with the first one's settings (`pollInterval`, `output`,
 * `onFailedBranches`). Each watch keeps its own ending: `failOnWorkflowError` errors after a failed
 * `finished`, and `abortOnUnsubscribe` aborts the execution when this watch leaves before `finished`
 * only if nothing else in the hub follows it then. A watch with its own `timeoutMs`, `signal` or
 * `detach` ends on terms no other shares: it polls on its own.
 */
export function sharedWatch(source: ExecutionSource, hub: RunHub, executionId: string, settings: RunSettings, canvasId?: string): Observable<RunEvent> {
  const target = { kind: 'watch', executionId, canvasId } as const;
  if (settings.timeoutMs !== undefined || settings.signal !== undefined || settings.detach !== undefined) return runLifecycle(source, target, settings);
  const shared = hub.follow(executionId, () => runLifecycle(source, target, { ...settings, abortOnUnsubscribe: false, failOnWorkflowError: false }));
  return new Observable<RunEvent>((subscriber) => {
    const watch = new WatchOfShared(subscriber, settings.failOnWorkflowError);
    const subscription = shared.subscribe(watch);
    return () => {
      subscription.unsubscribe();
      if (settings.abortOnUnsubscribe && !watch.over && hub.followers(executionId) === 0) abortInBackground(source, executionId, settings);
    };
  });
}

/**
 * One watch of the shared stream, passing its events on, with its own ending: an object with methods
 * rather than three closures, since every watched run holds it.
 */
class WatchOfShared implements Observer<RunEvent> {
  /** Finished, errored or completed: the execution is not this watch's to abort any more. */
  over = false;
  readonly #subscriber: Subscriber<RunEvent>;
  readonly #failOnWorkflowError: boolean;

  constructor(subscriber: Subscriber<RunEvent>, failOnWorkflowError: boolean) {
    this.#subscriber = subscriber;
    this.#failOnWorkflowError = failOnWorkflowError;
  }

  next(event: RunEvent): void {
    if (event.type === 'finished') this.over = true;
    this.#subscriber.next(event);
    if (event.type === 'finished' && this.#failOnWorkflowError && event.result.endedBy === 'failed') this.#subscriber.error(new WorkflowFailedError(event.result));
  }

  error(error: unknown): void {
    this.over = true;
    this.#subscriber.error(error);
  }

  complete(): void {
    this.over = true;
    this.#subscriber.complete();
  }
}
