/** Reactive runs and their helpers: what the composition root and `src/index.ts` export. */
export { createRuns, runsOver, type RunInput, type Runs, type RunHandles } from './runs.js';
export type { RunHandle, StartRunOptions } from './runs.js';
export type { FailedBranches, RunOptions, RunsDefaults } from './run-lifecycle.js';
export { DEFAULT_POLL_INTERVAL, type PollInterval } from './poll.js';
export type { OutputMode } from './poll.js';
export type {
  ConnectionEvent,
  FileEvent,
  FinishedEvent,
  MessageEvent,
  NodeEvent,
  RunEvent,
  RunEventOf,
  RunEventType,
  SnapshotEvent,
  StartedEvent,
  StatusEvent,
} from './events.js';
export { fromAbortable, observeExecutions, type ExecutionSource } from './run-lifecycle.js';
export { ofType } from './events.js';
export { toRunState, type RunStateOptions } from './run-state.js';
export { sampleRunState } from './run-state.js';
export { runStore, type RunStore, type RunStoreOptions } from './run-state.js';
export { type AcquireOptions, createRunLimiter, type RunLimiter, type RunLimiterOptions } from './run-limiter.js';
export type { MessageState, NodeState, Reconnecting, RunState, TaskProgress } from './run-state.js';
export { runResult } from './events.js';
export { shareRun } from './share-run.js';
export { toAsyncIterable } from './events.js';
export { type ClaimOptions, createMemoryIdempotencyStore, type IdempotencyClaim, type IdempotencyStore, type MemoryIdempotencyStoreOptions } from './idempotency-store.js';
