import { filter, last, lastValueFrom, map, type Observable, type OperatorFunction, pipe, type Subscription } from 'rxjs';
import type { ExecutionStatus, NodeError, NodeStatus, OutputFile, RunResult } from '../domain/model.js';
import type { RunState } from './run-state.js';
import { InvalidArgumentError, observableArgument } from '../errors/validation-errors.js';

/*
 * A run's events — everything a run tells its subscribers, discriminated on `type` — and the ways to
 * take them: `ofType` (the events of some types), `runResult` (the end as a Promise) and
 * `toAsyncIterable` (for code without RxJS).
 */

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

/** Every event type: a `Record` over the union, so a type added to it and not here fails to compile. */
const EVENT_TYPES: Readonly<Record<RunEventType, true>> = { started: true, snapshot: true, status: true, node: true, message: true, file: true, connection: true, finished: true };

/** The event of one `type`. */
export type RunEventOf<T extends RunEventType> = Extract<RunEvent, { readonly type: T }>;

// --- taking a run's events -----------------------------------------------------------------------
/**
 * Keeps the events of the given types, narrowed to them.
 *
 * @example
 * ```ts
 * run$.pipe(ofType('message')).subscribe((event) => process.stdout.write(event.delta));
 * run$.pipe(ofType('node', 'finished')).subscribe((event) => console.log(event.type));
 * ```
 */
export function ofType<T extends RunEventType>(...types: readonly [T, ...T[]]): OperatorFunction<RunEvent, RunEventOf<T>> {
  // From JavaScript a misspelt type (`'nodes'`) would keep nothing, silently.
  const known = Object.keys(EVENT_TYPES).join(', ');
  if (types.length === 0) throw new InvalidArgumentError('types', `must name at least one event type (${known})`);
  for (const type of types as readonly unknown[]) {
    if (typeof type !== 'string' || !Object.hasOwn(EVENT_TYPES, type)) throw new InvalidArgumentError('types', `${typeof type === 'string' ? `'${type}'` : typeof type} is not an event type (${known})`);
  }
  const wanted: ReadonlySet<RunEventType> = new Set(types);
  return filter((event): event is RunEventOf<T> => wanted.has(event.type));
}

/**
 * The end of a run as a Promise: resolves with the `RunResult` of `finished`, rejects as the run
 * errors (`WorkflowFailedError` for a failed workflow unless `failOnWorkflowError: false`, transport
 * errors, `RunTimeoutError`), and rejects with rxjs `EmptyError` if the run completed without one.
 * Call it with the run, or without arguments for a function to hand to rxjs `pipe()`.
 *
 * @example
 * ```ts
 * const result = await runResult(client.run('c-1'));
 * const later = pipe(shareRun(), runResult())(client.run('c-2'));
 * console.log(result.files.map((file) => file.url));
 * ```
 */
export function runResult(source: Observable<RunEvent>): Promise<RunResult>;
export function runResult(): (source: Observable<RunEvent>) => Promise<RunResult>;
export function runResult(
  source?: Observable<RunEvent>,
): Promise<RunResult> | ((source: Observable<RunEvent>) => Promise<RunResult>) {
  if (source === undefined) return resultOf;
  observableArgument('source', source);
  return resultOf(source);
}

function resultOf(source: Observable<RunEvent>): Promise<RunResult> {
  return lastValueFrom(source.pipe(toRunResult()));
}

/** The same as an operator: the run's events become its one `RunResult`, with the same errors. */
export function toRunResult(): OperatorFunction<RunEvent, RunResult> {
  return pipe(
    ofType('finished'),
    last(),
    map((event) => event.result),
  );
}

type Ending = { readonly failed: false } | { readonly failed: true; readonly error: unknown };

/**
 * An Observable as an async iterable, for code without RxJS. Each iteration subscribes once, at its
 * first `next()`; events are buffered until read. Leaving the loop (`break`, `return`, a throw)
 * unsubscribes — for a run, that aborts the execution like any unsubscribe.
 *
 * @example
 * ```ts
 * for await (const event of toAsyncIterable(client.run('c-1'))) {
 *   if (event.type === 'message') process.stdout.write(event.delta);
 *   if (event.type === 'node' && event.status === 'failed') break; // aborts the execution
 * }
 * ```
 */
export function toAsyncIterable<T>(source: Observable<T>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterate(source) };
}

interface Pending<T> {
  readonly resolve: (result: IteratorResult<T, undefined>) => void;
  readonly reject: (error: unknown) => void;
}

function iterate<T>(source: Observable<T>): AsyncIterator<T, undefined> {
  const buffered: T[] = [];
  let ending: Ending | undefined;
  // Every `next()` not answered yet, in call order: the protocol lets a caller ask again without
  // awaiting, and each call gets the next value (or the end) in turn.
  const waiting: Pending<T>[] = [];
  let subscription: Subscription | undefined;

  const settleWaiting = (): void => {
    for (let pending = waiting[0]; pending !== undefined; pending = waiting[0]) {
      if (buffered.length > 0) {
        waiting.shift();
        pending.resolve({ done: false, value: buffered.shift() as T });
      } else if (ending !== undefined) {
        waiting.shift();
        // The error goes to the first caller that meets the end; later ones are simply done.
        if (ending.failed) pending.reject(ending.error);
        else pending.resolve({ done: true, value: undefined });
        ending = { failed: false };
      } else {
        return;
      }
    }
  };

  const finish = (): IteratorResult<T, undefined> => {
    subscription?.unsubscribe();
    buffered.length = 0;
    ending = { failed: false };
    settleWaiting();
    return { done: true, value: undefined };
  };

  return {
    next: () =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        subscription ??= source.subscribe({
          next: (value) => {
            buffered.push(value);
            settleWaiting();
          },
          error: (error: unknown) => {
            ending = { failed: true, error };
            settleWaiting();
          },
          complete: () => {
            ending = { failed: false };
            settleWaiting();
          },
        });
        settleWaiting();
      }),
    return: () => Promise.resolve(finish()),
  };
}
