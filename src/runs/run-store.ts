import { asapScheduler, type Observable, type Subscription } from 'rxjs';
import type { RunEvent } from './events.js';
import { INITIAL_RUN_STATE, type RunState } from './run-state.js';
import { type RunStateOptions, toRunState } from './to-run-state.js';

/**
 * A run's state for UI frameworks, with no dependency on any: React's `useSyncExternalStore`
 * (`subscribe`, `getSnapshot`), Svelte stores (`subscribe` calls the listener at once with the value)
 * and Vue (`shallowRef` set from `subscribe`) all take it as it is.
 *
 * @example
 * ```tsx
 * const store = runStore(handle.events);
 * function Progress() {
 *   const state = useSyncExternalStore(store.subscribe, store.getSnapshot);
 *   return <progress value={state?.progress.succeeded ?? 0} max={state?.progress.total ?? 1} />;
 * }
 * ```
 */
export interface RunStore {
  // Functions, not methods: frameworks take them unbound (`useSyncExternalStore(store.subscribe, store.getSnapshot)`).
  /**
   * Adds a listener, called at once with the current snapshot and then on every change; returns the
   * function that removes it. The first listener subscribes the run; the last one leaving
   * unsubscribes it once the current task is over (which aborts a `client.run` — give the store a
   * handle's `events` for a run that must outlive the components showing it). A listener added again
   * within that task, as React's StrictMode does when it mounts a component twice, keeps the run going.
   */
  readonly subscribe: (listener: (state: RunState | undefined) => void) => () => void;
  /** The latest state (one per read, see `toRunState`): the same object until the state changes; `undefined` before the first. */
  readonly getSnapshot: () => RunState | undefined;
  /**
   * The error that ended the run, if one did (a failed request; a failed workflow also shows in the
   * state's `result`). An error counts as a change: listeners hear of it and the snapshot is a new
   * object, so frameworks that compare snapshots by identity render again and can read it.
   */
  readonly getError: () => unknown;
}

/**
 * Options of {@link runStore}: those of `toRunState`, and where a listener's error goes.
 *
 * @example
 * ```ts
 * const options: RunStoreOptions = { sampleMs: 1_000, onListenerError: (error) => logger.error('run card failed', { error }) };
 * ```
 */
export interface RunStoreOptions extends RunStateOptions {
  /**
   * Called with the error a listener threw; the other listeners still get the change, and the run
   * goes on. Default: the platform's `reportError` where there is one (browsers, Deno, Bun: reported as
   * an uncaught error is, without stopping anything), else `console.error`. Never rethrown: in Node an
   * uncaught exception would end the process, and every run in it.
   */
  readonly onListenerError?: (error: unknown) => void;
}

/** The platform's `reportError`, where it has one (not Node). */
function platformReportError(): ((error: unknown) => void) | undefined {
  const candidate: unknown = (globalThis as { readonly reportError?: unknown }).reportError;
  return typeof candidate === 'function' ? (error) => { Reflect.apply(candidate, globalThis, [error]); } : undefined;
}

function logListenerError(error: unknown): void {
  console.error('flowstream runStore: a listener threw', error);
}

/**
 * Makes a {@link RunStore} of a run. Nothing happens until the first listener; once the run has
 * ended, the store keeps its last state and error and never subscribes the run again.
 *
 * @example
 * ```ts
 * const store = runStore(client.startRun('c-1').events, { sampleMs: 1_000 });
 * const stop = store.subscribe((state) => console.log(state?.progress));
 * ```
 */
export function runStore(run$: Observable<RunEvent>, options: RunStoreOptions = {}): RunStore {
  const states$ = run$.pipe(toRunState(options));
  const onListenerError = options.onListenerError ?? platformReportError() ?? logListenerError;
  // Entries, not listeners: the same function subscribed twice is two subscriptions.
  const listeners = new Set<{ readonly listener: (state: RunState | undefined) => void }>();
  let snapshot: RunState | undefined;
  let error: unknown;
  let subscription: Subscription | undefined;
  // The run's unsubscription once the last listener left, held until the current task is over.
  let leaving: Subscription | undefined;
  let ended = false;

  /** Every listener hears of every change: one that throws is reported, and the others still hear of it. */
  const tell = (listener: (state: RunState | undefined) => void): void => {
    try {
      listener(snapshot);
    } catch (thrown: unknown) {
      onListenerError(thrown);
    }
  };
  const notify = (): void => {
    for (const entry of [...listeners]) tell(entry.listener);
  };

  const connect = (): void => {
    if (ended || subscription !== undefined) return;
    error = undefined;
    subscription = states$.subscribe({
      next: (state) => {
        snapshot = state;
        notify();
      },
      error: (caught: unknown) => {
        ended = true;
        error = caught;
        // A new object even when no state came yet (a start refused): the change must show.
        snapshot = { ...(snapshot ?? INITIAL_RUN_STATE) };
        notify();
      },
      complete: () => {
        ended = true;
      },
    });
  };

  return {
    subscribe: (listener) => {
      const entry = { listener };
      listeners.add(entry);
      leaving?.unsubscribe();
      leaving = undefined;
      tell(listener);
      connect();
      return () => {
        if (!listeners.delete(entry) || listeners.size > 0 || subscription === undefined) return;
        // React's StrictMode (and a component remounting) unsubscribes and subscribes again in the
        // same task: the run is left only if no listener came back by then, or that would abort the
        // execution and start a second one.
        leaving ??= asapScheduler.schedule(() => {
          leaving = undefined;
          if (listeners.size > 0) return;
          subscription?.unsubscribe();
          subscription = undefined;
        });
      };
    },
    getSnapshot: () => snapshot,
    getError: () => error,
  };
}
