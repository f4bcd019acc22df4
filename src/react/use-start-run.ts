import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Observable } from 'rxjs';
import type { RunHandles, RunInput } from '../runs/runs.js';
import type { RunEvent } from '../runs/events.js';
import { INITIAL_RUN_STATE, type RunState, runStore, type RunStore } from '../runs/run-state.js';
import { useRunStore } from './run-store-state.js';

/** A run another part of the app started — through a run relay — as `useStartRun` follows it. */
export interface StartedRun {
  readonly executionId: string;
  /** Its events, e.g. `connectRun(eventsUrl, { token })`. */
  readonly events: Observable<RunEvent>;
  /** Aborts the execution, e.g. the relay's `POST …/executions/:id/cancel` with the token. */
  readonly cancel: () => Promise<unknown>;
}

/** Starts a run elsewhere (an app's server, a relay's `POST /runs`) and says how to follow and cancel it. */
export type StartRunFunction = (canvasId: string, input: RunInput) => Promise<StartedRun>;

/** What `useStartRun` starts runs with: a client (it holds the API key: servers, tools) or a function. */
export type RunStarter = Pick<RunHandles, 'startRun'> | StartRunFunction;

/**
 * Where the hook's run is: `idle` before `start`, `starting` until the execution id is known, `running`,
 * `ended` once `state.result` says how, `error` when the start or the run failed (see `error`).
 */
export type StartRunStatus = 'idle' | 'starting' | 'running' | 'ended' | 'error';

/** What `useStartRun` gives a component. */
export interface StartRunView {
  /** Starts a run of the workflow (leaving a run started before: it is no longer followed, not aborted). */
  readonly start: (canvasId: string, input?: RunInput) => void;
  /** Aborts the current run (once the start answered, if it has not yet); its end shows in `state`. */
  readonly cancel: () => void;
  readonly status: StartRunStatus;
  /**
   * The run's state: `undefined` until its first reading. From `cancel()` until the result it says
   * `cancelling: true` (as `RunHandle.state` does), so the display says so at once, not once the abort
   * has landed and been read.
   */
  readonly state: RunState | undefined;
  readonly executionId: string | undefined;
  /** What made the start or the run fail; a failed workflow is not an error (it shows in `state.result`). */
  readonly error: unknown;
}

/** The run the hook follows. */
interface CurrentRun {
  readonly store: RunStore | undefined;
  readonly executionId: string | undefined;
  readonly startError: unknown;
  /** `cancel()` was called: the state says `cancelling` until the result. */
  readonly cancelling?: true;
}

/** How the hook ends or leaves one run, whatever started it. */
interface RunControl {
  cancel(): void;
  /** Stops following it (the execution runs on). */
  leave(): void;
}

const STARTING: CurrentRun = { store: undefined, executionId: undefined, startError: undefined };

/**
 * Starts runs from a component and follows the latest: `start(canvasId, input?)` from an event handler,
 * then `state` (one `RunState` per reading), `executionId`, `status`, and `cancel()`. With a client the
 * run is a `client.startRun` handle; with a function, whatever it started — typically through a run
 * relay, followed with `connectRun`, so that the browser never holds the API key. `start` and `cancel`
 * keep their identity across renders. Unmounting stops following the run and leaves the execution
 * running; `cancel()` aborts it.
 *
 * @example
 * ```tsx
 * function RunButton({ canvasId }: { canvasId: string }) {
 *   const run = useStartRun(async (canvasId, input) => {
 *     const answer = await fetch('/flowstream/runs', { method: 'POST', body: JSON.stringify({ canvasId, ...input }) });
 *     const { executionId, token } = (await answer.json()) as { executionId: string; token: string };
 *     const headers = { Authorization: `Bearer ${token}` };
 *     return {
 *       executionId,
 *       events: connectRun(`/flowstream/executions/${executionId}/events`, { token }),
 *       cancel: () => fetch(`/flowstream/executions/${executionId}/cancel`, { method: 'POST', headers }),
 *     };
 *   });
 *   return run.status === 'running'
 *     ? <button onClick={run.cancel}>Cancel ({run.state?.progress.succeeded ?? 0}/{run.state?.progress.total ?? '?'})</button>
 *     : <button onClick={() => run.start(canvasId)}>Run</button>;
 * }
 * ```
 */
export function useStartRun(starter: RunStarter): StartRunView {
  const starterRef = useRef(starter);
  useEffect(() => {
    starterRef.current = starter;
  });
  const [current, setCurrent] = useState<CurrentRun | undefined>(undefined);
  const control = useRef<RunControl | undefined>(undefined);

  const start = useCallback((canvasId: string, input: RunInput = {}) => {
    control.current?.leave();
    const chosen = starterRef.current;
    if (typeof chosen !== 'function') {
      const handle = chosen.startRun(canvasId, input);
      const own: RunControl = {
        cancel: () => void handle.cancel().catch(() => undefined),
        leave: () => { handle.detach(); },
      };
      control.current = own;
      setCurrent({ ...STARTING, store: runStore(handle.events) });
      handle.executionId.then(
        (executionId) => {
          if (control.current === own) setCurrent((run) => (run === undefined ? run : { ...run, executionId }));
        },
        // The run's store reports what failed.
        () => undefined,
      );
      return;
    }
    let started: StartedRun | undefined;
    let cancelled = false;
    let left = false;
    // A cancel that could not be sent is no longer on its way: the state stops saying cancelling.
    const sendCancel = (run: StartedRun): void => {
      run.cancel().catch(() => {
        if (!left) setCurrent((shown) => (shown === undefined ? shown : notCancelling(shown)));
      });
    };
    const own: RunControl = {
      cancel: () => {
        cancelled = true;
        if (started !== undefined) sendCancel(started);
      },
      leave: () => { left = true; },
    };
    control.current = own;
    setCurrent(STARTING);
    chosen(canvasId, input).then(
      (run) => {
        started = run;
        if (cancelled) sendCancel(run);
        if (!left) setCurrent({ store: runStore(run.events), executionId: run.executionId, startError: undefined, ...(cancelled ? { cancelling: true } : {}) });
      },
      (error: unknown) => {
        if (!left) setCurrent({ ...STARTING, startError: error ?? new Error('The run did not start') });
      },
    );
  }, []);

  const cancel = useCallback(() => {
    if (control.current === undefined) return;
    control.current.cancel();
    setCurrent((run) => (run === undefined ? run : { ...run, cancelling: true }));
  }, []);

  useEffect(
    () => () => {
      control.current?.leave();
      control.current = undefined;
    },
    [],
  );

  const { state, error: runError } = useRunStore(current?.store);
  const error = current?.startError ?? runError;
  const executionId = current?.executionId ?? state?.executionId;
  const cancelling = current?.cancelling === true && state?.result === undefined && error === undefined;
  // The same object until the state or the cancel changes, as the store's snapshots are.
  const shown = useMemo(() => (cancelling ? { ...(state ?? INITIAL_RUN_STATE), cancelling: true as const } : state), [cancelling, state]);
  return { start, cancel, status: statusOf(current, state, executionId, error), state: shown, executionId, error };
}

function notCancelling(run: CurrentRun): CurrentRun {
  return { store: run.store, executionId: run.executionId, startError: run.startError };
}

function statusOf(current: CurrentRun | undefined, state: RunState | undefined, executionId: string | undefined, error: unknown): StartRunStatus {
  if (current === undefined) return 'idle';
  if (error !== undefined) return 'error';
  if (state?.result !== undefined) return 'ended';
  return executionId === undefined ? 'starting' : 'running';
}
