import type { ExecutionStatus, NodeError, NodeStatus, OutputFile, RunResult } from '../domain/model.js';
import type { RunState } from './run-state.js';

/**
 * The execution id is known: after the start answered (`run`) or with the first status (`watch`).
 * `status` is the execution's status at that moment.
 */
export interface StartedEvent {
  readonly type: 'started';
  readonly executionId: string;
  readonly canvasId?: string;
  readonly status: ExecutionStatus;
}

/** The execution's status changed. */
export interface StatusEvent {
  readonly type: 'status';
  readonly executionId: string;
  readonly status: ExecutionStatus;
  readonly previous?: ExecutionStatus;
}

/**
 * A node changed status: one event per observed transition, in order. A node seen for the first time
 * has no `previous`; a node that moved `init → finish` between two polls gives one event with
 * `previous: 'init'`. Statuses only move forward (service.md §3.2).
 */
export interface NodeEvent {
  readonly type: 'node';
  readonly executionId: string;
  readonly nodeId: string;
  readonly title?: string;
  readonly status: NodeStatus;
  readonly previous?: NodeStatus;
  readonly error?: NodeError;
}

/**
 * New text of a message since its last event (service.md §4.4). Concatenating `delta`s gives `content`;
 * when `replaced` is true the earlier text was rewritten and `delta`/`reasoningDelta` hold the whole
 * new text, so a consumer starts over from them.
 */
export interface MessageEvent {
  readonly type: 'message';
  readonly executionId: string;
  readonly nodeId: string;
  readonly messageId: string;
  readonly role: 'ai' | 'tool';
  readonly delta: string;
  readonly reasoningDelta: string;
  /** The message's full text so far. */
  readonly content: string;
  /** The message's full reasoning so far (usually `''`, service.md §4.5). */
  readonly reasoningContent: string;
  readonly replaced: boolean;
}

/**
 * An output file appeared: once per file (service.md §4.6), with its `url` — a file listed first without
 * one is announced when its url arrives, or at the end with what is known of it.
 */
export interface FileEvent {
  readonly type: 'file';
  readonly executionId: string;
  readonly file: OutputFile;
}

/** The execution reached `finish` or `failed`; always the last event of a run. */
export interface FinishedEvent {
  readonly type: 'finished';
  readonly executionId: string;
  readonly result: RunResult;
}

/**
 * The run's reads are failing, or succeed again. While `reconnecting` is present the service (or the
 * request budget) cannot be reached — the connection refused or dropped, timeouts, 5xx — and the run
 * reads again with backoff, through the budget, for up to `RunOptions.outageMs`; the execution itself
 * runs on. A `connection` event without `reconnecting` says reads succeed again: the run goes on as
 * before. One event per failed read, so a display can count the attempts.
 *
 * @example
 * ```ts
 * run$.pipe(ofType('connection')).subscribe((event) => banner.show(event.reconnecting?.error));
 * ```
 */
export interface ConnectionEvent {
  readonly type: 'connection';
  readonly executionId: string;
  readonly reconnecting?: {
    /** Reads failed in this outage so far. */
    readonly attempts: number;
    /** How long reads have been failing, in ms on the run's scheduler. */
    readonly failingForMs: number;
    /** The last failure, in short (`HTTP 503`, `network error`, `timed out`). */
    readonly error: string;
  };
}

/**
 * The run as it stands, in place of the events before it: what a late subscriber of a shared run
 * (`shareRun()`, a run handle's `events`) receives first, then the live events. `state` is the state
 * after the last read (the one `toRunState()` emitted for it); folding the events that follow into it
 * gives the same states as following the run from its start.
 *
 * @example
 * ```ts
 * handle.events.subscribe((event) => {
 *   if (event.type === 'snapshot') render(event.state);
 * });
 * ```
 */
export interface SnapshotEvent {
  readonly type: 'snapshot';
  readonly executionId: string;
  readonly state: RunState;
}

/**
 * Everything a run tells its subscribers, discriminated on `type`.
 *
 * @example
 * ```ts
 * client.run('c-1').subscribe((event) => {
 *   switch (event.type) {
 *     case 'message': process.stdout.write(event.delta); break;
 *     case 'finished': console.log(event.result.files); break;
 *     default: break;
 *   }
 * });
 * ```
 */
export type RunEvent = StartedEvent | SnapshotEvent | StatusEvent | NodeEvent | MessageEvent | FileEvent | ConnectionEvent | FinishedEvent;

export type RunEventType = RunEvent['type'];

/** The event of one `type`. */
export type RunEventOf<T extends RunEventType> = Extract<RunEvent, { readonly type: T }>;
