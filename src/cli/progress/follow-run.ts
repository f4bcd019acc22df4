import { type Observable, Subscription } from 'rxjs';
import type { RunEvent, RunResult } from '../../index.js';
import type { InterruptSource, StopSignal } from './interrupts.js';
import type { RunRenderer, TextSink } from './renderer.js';

/** How following a run ended. */
export type RunEnding =
  | { readonly kind: 'finished'; readonly result: RunResult }
  | { readonly kind: 'interrupted'; readonly signal: StopSignal; readonly executionId?: string; readonly detached: boolean }
  | { readonly kind: 'error'; readonly error: unknown };

/** What following a run needs. */
export interface FollowOptions {
  readonly renderer: RunRenderer;
  /**
   * What Ctrl-C, SIGTERM or SIGHUP does. `abort`: unsubscribe from a run made with
   * `abortOnUnsubscribe: true`, which aborts the execution exactly once (even while the start is in
   * flight). `detach`: leave the execution running — once its id is known, so that the user can
   * `watch` it later.
   */
  readonly onInterrupt: 'abort' | 'detach';
  readonly interrupts: InterruptSource;
  /** Where notices for the user go (stderr), apart from the run's display. */
  readonly notices: TextSink;
}

/**
 * Subscribes to a run, feeds its display, and settles with how it ended. Never rejects: errors are
 * an ending like the others. Runs should be made with `failOnWorkflowError: false`, so that a failed
 * workflow ends as `finished` with its result.
 */
export function followRun(run$: Observable<RunEvent>, options: FollowOptions): Promise<RunEnding> {
  const { renderer, notices } = options;
  return new Promise((resolve) => {
    let executionId: string | undefined;
    let result: RunResult | undefined;
    let detachWhenStarted = false;
    // Made first so that an ending during `subscribe` (synchronous) already closes it: `add` to a
    // closed Subscription tears down at once.
    const subscription = new Subscription();
    let settled = false;

    const settle = (ending: RunEnding): void => {
      if (settled) return;
      settled = true;
      stopListening();
      subscription.unsubscribe();
      renderer.close(result);
      resolve(ending);
    };
    let signal: StopSignal = 'SIGINT';
    const detach = (id: string): void => {
      settle({ kind: 'interrupted', signal, executionId: id, detached: true });
      notices.write(`Detached: execution ${id} keeps running.\nFollow it again with: flowstream watch ${id}\nAbort it with: flowstream abort ${id}\n`);
    };
    const stopListening = options.interrupts((received) => {
      signal = received;
      // Ctrl-C is what the user did; another signal is named, so that a log of a CI job says what stopped it.
      const interrupted = signal === 'SIGINT' ? 'Interrupted' : `Interrupted by ${signal}`;
      if (options.onInterrupt === 'abort') {
        // The abort is sent in the background and the process waits for it; a second signal quits at once.
        const what = executionId === undefined ? 'the run is aborted as soon as it has started' : `aborting execution ${executionId}`;
        settle({ kind: 'interrupted', signal, ...(executionId === undefined ? {} : { executionId }), detached: false });
        notices.write(`${interrupted}: ${what}. (Ctrl-C again to quit at once.)\n`);
      } else if (executionId === undefined) {
        notices.write(`${interrupted}: detaching as soon as the run has started.\n`);
        detachWhenStarted = true;
      } else {
        detach(executionId);
      }
    });

    subscription.add(
      run$.subscribe({
        next: (event) => {
          executionId = event.executionId;
          if (event.type === 'finished') result = event.result;
          renderer.event(event);
          if (detachWhenStarted) detach(event.executionId);
        },
        error: (error: unknown) => {
          settle({ kind: 'error', error });
        },
        complete: () => {
          settle(result === undefined ? { kind: 'error', error: new Error('The run ended without a result.') } : { kind: 'finished', result });
        },
      }),
    );
  });
}
