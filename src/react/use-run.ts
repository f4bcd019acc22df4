import type { Observable } from 'rxjs';
import type { RunEvent } from '../runs/events.js';
import { type RunState, runStore, type RunStore } from '../runs/run-state.js';
import { useRunStore } from './run-store-state.js';

/**
 * One store per run source, whichever components show it: they share one subscription, and a
 * component mounted again (StrictMode, a remount) finds the run where it was.
 */
const stores = new WeakMap<Observable<RunEvent>, RunStore>();

function storeOf(source: Observable<RunEvent>): RunStore {
  const known = stores.get(source);
  if (known !== undefined) return known;
  const store = runStore(source);
  stores.set(source, store);
  return store;
}

/**
 * The state of a run, kept up to date: `undefined` before its first reading (and while `source` is
 * `undefined`), then one `RunState` per reading until its end, which `state.result` shows — a failed
 * workflow included. The run is subscribed while a component shows it; every component given the same
 * `source` shares one subscription, and React's StrictMode double mount neither aborts nor restarts it.
 * Create the source once (`useMemo`, or outside the component): a new Observable is a new run.
 *
 * An error that ended the run otherwise (a relay refusing the token, a request that could not be made)
 * is thrown while rendering, for the nearest error boundary.
 *
 * @example
 * ```tsx
 * function Progress({ executionId, token }: { executionId: string; token: string }) {
 *   const run$ = useMemo(() => connectRun(`/flowstream/executions/${executionId}/events`, { token }), [executionId, token]);
 *   const state = useRun(run$);
 *   if (state === undefined) return <p>Connecting…</p>;
 *   return <progress value={state.progress.succeeded} max={state.progress.total} />;
 * }
 * ```
 */
export function useRun(source: Observable<RunEvent> | undefined): RunState | undefined {
  const { state, error } = useRunStore(source === undefined ? undefined : storeOf(source));
  if (error !== undefined) throw error instanceof Error ? error : new Error('The run failed', { cause: error });
  return state;
}
