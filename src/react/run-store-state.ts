import { useSyncExternalStore } from 'react';
import { isWorkflowFailedError } from '../errors/run-errors.js';
import type { RunState, RunStore } from '../runs/run-state.js';

/** The store of no run: nothing to subscribe, no state. */
const NO_RUN: RunStore = {
  subscribe: () => () => undefined,
  getSnapshot: () => undefined,
  getError: () => undefined,
};

/** What a component shows of a run store: its state, and the error that ended it. */
export interface RunStoreView {
  readonly state: RunState | undefined;
  /** The error that ended the run; a failed workflow is not one (it shows in `state.result`). */
  readonly error: unknown;
}

/** Reads `store` in a component, rendering again on each change; no store reads as no run. */
export function useRunStore(store: RunStore | undefined): RunStoreView {
  const read = store ?? NO_RUN;
  // The third argument serves server rendering and hydration: the same snapshot.
  const state = useSyncExternalStore(read.subscribe, read.getSnapshot, read.getSnapshot);
  const error = read.getError();
  return { state, error: isWorkflowFailedError(error) ? undefined : error };
}
