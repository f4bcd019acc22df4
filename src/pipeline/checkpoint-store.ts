import { Observable, Subject } from 'rxjs';
import type { PipelineCheckpoint, StepCheckpoint } from './pipeline-checkpoint.js';

/**
 * A pipeline as a store keeps it: its checkpoint, whether someone asked to cancel it, and the
 * fencing token of the process that leads it now.
 *
 * @example
 * ```ts
 * const stored = await store.load('nightly-2026-11-26');
 * if (stored?.cancelRequested === true) console.log('cancelled');
 * ```
 */
export interface StoredPipeline {
  readonly checkpoint: PipelineCheckpoint;
  readonly cancelRequested: boolean;
  /** The latest fencing token handed out by `claim` (0 before the first). */
  readonly fence: number;
}

/**
 * What a store tells the processes following a pipeline: a step changed (from any process), or a
 * cancel was asked for.
 *
 * @example
 * ```ts
 * store.events(pipelineId).subscribe((event) => event.type === 'cancel' && stopEverything());
 * ```
 */
export type CheckpointStoreEvent =
  | { readonly type: 'step'; readonly pipelineId: string; readonly step: string; readonly entry: StepCheckpoint }
  | { readonly type: 'cancel'; readonly pipelineId: string };

/**
 * Where pipelines keep their checkpoints so that any process can resume them. A step moves by compare-and-set under a fencing token: a process that lost the lead
 * (another one `claim`ed the pipeline after it, a crashed worker's steps taken over) can no longer
 * write, so two processes never both record — and so never both start — the same step.
 * `createMemoryCheckpointStore()` keeps them in one process; `createRedisCheckpointStore()`
 * (`flowstream/redis`) shares them across processes.
 *
 * @example
 * ```ts
 * const store = createMemoryCheckpointStore();
 * runPipeline(client, definition, { checkpoints: { store, pipelineId: 'nightly' } }).subscribe();
 * await store.requestCancel('nightly'); // from anywhere: every running execution is aborted once
 * ```
 */
export interface CheckpointStore {
  /** Takes the lead of a pipeline: a token above every earlier one; writes with older tokens fail from now on. */
  claim(pipelineId: string): Promise<number>;
  /** The pipeline as stored, or `undefined` when nothing was stored for it yet. */
  load(pipelineId: string): Promise<StoredPipeline | undefined>;
  /**
   * Moves one step from `expected` (`undefined`: no entry yet) to `next`, only if it still stands at
   * `expected` and `token` is the latest claim. False when either is no longer so: nothing was written.
   * Also false, in the same step, when `next` is `starting` and a cancel was asked for: a cancelled
   * pipeline starts nothing, however its cancel and the start cross.
   */
  transition(pipelineId: string, step: string, expected: StepCheckpoint | undefined, next: StepCheckpoint, token: number): Promise<boolean>;
  /** Asks every process following the pipeline to cancel it; recorded, so a process that follows it later cancels it too. */
  requestCancel(pipelineId: string): Promise<void>;
  /**
   * The pipeline's step changes and cancel requests, as they happen. A cancel asked before the
   * subscription, or while its connection was away, is told too — possibly more than once.
   */
  events(pipelineId: string): Observable<CheckpointStoreEvent>;
}

/** Two entries are the same state of a step (the compare of compare-and-set). */
export function sameEntry(a: StepCheckpoint | undefined, b: StepCheckpoint | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.status === b.status && a.executionId === b.executionId && a.attempt === b.attempt && a.attemptedAt === b.attemptedAt;
}

interface MemoryPipeline {
  steps: Record<string, StepCheckpoint>;
  cancelRequested: boolean;
  fence: number;
}

/**
 * A `CheckpointStore` in this process's memory: for one process (tests, a single service), with
 * the same fencing and compare-and-set rules as the shared one.
 *
 * @example
 * ```ts
 * const store = createMemoryCheckpointStore();
 * runPipeline(client, definition, { checkpoints: { store, pipelineId: 'p-1' } }).subscribe();
 * ```
 */
export function createMemoryCheckpointStore(): CheckpointStore {
  const pipelines = new Map<string, MemoryPipeline>();
  const changes = new Subject<CheckpointStoreEvent>();
  const pipeline = (id: string): MemoryPipeline => {
    let found = pipelines.get(id);
    if (found === undefined) pipelines.set(id, (found = { steps: {}, cancelRequested: false, fence: 0 }));
    return found;
  };
  return {
    claim: (id) => {
      const found = pipeline(id);
      found.fence += 1;
      return Promise.resolve(found.fence);
    },
    load: (id) => {
      const found = pipelines.get(id);
      return Promise.resolve(found === undefined ? undefined : { checkpoint: { steps: { ...found.steps } }, cancelRequested: found.cancelRequested, fence: found.fence });
    },
    transition: (id, step, expected, next, token) => {
      const found = pipeline(id);
      if (token !== found.fence || !sameEntry(found.steps[step], expected)) return Promise.resolve(false);
      if (next.status === 'starting' && found.cancelRequested) return Promise.resolve(false);
      found.steps[step] = next;
      changes.next({ type: 'step', pipelineId: id, step, entry: next });
      return Promise.resolve(true);
    },
    requestCancel: (id) => {
      pipeline(id).cancelRequested = true;
      changes.next({ type: 'cancel', pipelineId: id });
      return Promise.resolve();
    },
    events: (id) =>
      new Observable<CheckpointStoreEvent>((subscriber) => {
        // A cancel asked for before this subscription is not missed.
        if (pipelines.get(id)?.cancelRequested === true) subscriber.next({ type: 'cancel', pipelineId: id });
        return changes.subscribe((event) => {
          if (event.pipelineId === id) subscriber.next(event);
        });
      }),
  };
}
