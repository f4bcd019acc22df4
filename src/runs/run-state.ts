import { asapScheduler, asyncScheduler, type MonoTypeOperatorFunction, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { ExecutionStatus, NodeError, NodeStatus, OutputFile, RunResult } from '../domain/model.js';
import { durationOf, type NodeTimes, seeNodeEvent, serviceNodeTimes } from '../domain/node-times.js';
import { objectArgument, observableArgument, schedulerArgument, timerDelay } from '../errors/validation-errors.js';
import type { ConnectionEvent, MessageEvent, NodeEvent, RunEvent } from './events.js';

/*
 * A run's one representation for its consumers: its state (`RunState`, what a UI shows) and its
 * readings (`RunReading`: `{ seq, state, events }`, one per read that changed something). The fold of
 * events into a state (`RunStateFold`), the reader that makes a run's readings (`RunReader`), and
 * the projections built on them: `toRunState`, `sampleRunState` and `runStore` for UI frameworks.
 */

/** A message at its full text so far. */
export interface MessageState {
  readonly messageId: string;
  readonly role: MessageEvent['role'];
  readonly content: string;
  readonly reasoningContent: string;
}

/** A node as a UI shows it. */
export interface NodeState {
  readonly nodeId: string;
  readonly title?: string;
  readonly status: NodeStatus;
  readonly error?: NodeError;
  readonly messages: readonly MessageState[];
  /** The node's messages' text, joined by a blank line. */
  readonly text: string;
  /**
   * The node does work: a task node, one the output lists (service.md §4.2), counted in `progress`.
   * Once the run has read its output, that read says which nodes are tasks, for the rest of the run.
   * Before, nodes with no work (start, memo, resource…) being `finish` from the start (§3.2), a node is
   * taken for a task once it was seen at any other status or had a message: a task whose whole life
   * passed between two reads looks like one with no work, and a content node (document, image…, `init`
   * until a tick after its parent, §3.2) like a task, until the output is read.
   */
  readonly task: boolean;
  /**
   * How long the node has run, or ran: from its start and end times in the result's output when the
   * service gave them (§4.2), otherwise from when the run saw it executing to when it saw it done, on
   * the run's scheduler. Absent when neither is known (a node with no work, one not started yet).
   */
  readonly elapsedMs?: number;
}

/**
 * A run folded into what a UI shows: what `toRunState()` emits, one state per read of the execution,
 * and what a late subscriber of a shared run receives first (a `snapshot` event).
 */
export interface RunState {
  /** Absent until `started`. */
  readonly executionId?: string;
  readonly canvasId?: string;
  readonly status?: ExecutionStatus;
  /** In the service's parents-before-children order (service.md §4.1). */
  readonly nodes: readonly NodeState[];
  readonly files: readonly OutputFile[];
  /** How many task nodes (see `NodeState.task`) ended, and how: see {@link TaskProgress}. */
  readonly progress: TaskProgress;
  /**
   * Time from the start of the run (its subscription, or the start of a run handle) to this state (to
   * `finished` once finished), on the run's scheduler. An event stream that is not a run of this client
   * times it from `toRunState()`'s subscription.
   */
  readonly elapsedMs: number;
  /** Present once `finished`. */
  readonly result?: RunResult;
  /**
   * `true` on a run handle's states from `cancel()` (or its `signal`, its `timeoutMs`) until the
   * result: the abort is sent, or on its way, and the end is read as soon as it lands. A display
   * shows "cancelling…" at once rather than a run that still seems to work.
   */
  readonly cancelling?: true;
  /**
   * Present while the run follows its execution through an outage (its reads fail, and it reads again
   * with backoff, `RunOptions.outageMs`); absent again once a read succeeds.
   */
  readonly reconnecting?: Reconnecting;
}

/**
 * The task nodes of a run (`RunState.progress`): `succeeded` (`finish`) and `failed` (a failed node,
 * an aborted or timed-out one too, service.md §3.5, §3.6) out of `total`. The total is the task nodes
 * of the first output read and does not grow after it; before it, the nodes seen at work (see
 * `NodeState.task`). `done` is `succeeded + failed`,
 * kept for displays that only count ended nodes; a bar that fills with `done` shows an aborted run full,
 * so fill it with `succeeded` and show `failed` apart.
 *
 * @example
 * ```ts
 * const { succeeded, failed, total } = state.progress;
 * render(`${succeeded}/${total}${failed > 0 ? ` (${failed} failed)` : ''}`);
 * ```
 */
export interface TaskProgress {
  readonly succeeded: number;
  readonly failed: number;
  /** `succeeded + failed`. */
  readonly done: number;
  readonly total: number;
}

/** A run reading through an outage (`RunState.reconnecting`). */
export interface Reconnecting {
  /** The run's `elapsedMs` when the outage's first read failed. */
  readonly since: number;
  /** Reads failed in this outage so far. */
  readonly attempts: number;
  /** The last failure, in short (`HTTP 503`, `network error`, `timed out`, `request budget unavailable`). */
  readonly error: string;
}

export const INITIAL_RUN_STATE: RunState = { nodes: [], files: [], progress: { succeeded: 0, failed: 0, done: 0, total: 0 }, elapsedMs: 0 };

/** A node while it is folded: its fields as the latest events left them, its messages by id. */
interface NodeEntry {
  readonly nodeId: string;
  title: string | undefined;
  status: NodeStatus;
  error: NodeError | undefined;
  /** Seen at work (see `NodeState.task`); the output's list of tasks, once read, overrides it. */
  seenWorking: boolean;
  /** In first-seen order; a message's new text keeps its place. Made with the node's first message: most nodes have none. */
  messages: Map<string, MessageState> | undefined;
  /** The node's state as last built, dropped when the node changes: unchanged nodes keep their object. */
  built: NodeState | undefined;
}

/**
 * A run's events folded into its {@link RunState}. Each event costs O(1) (a node, a message or a file
 * is found by its id, never by a scan), and the state is built when asked for, once per change, in
 * O(nodes + messages + files), each unchanged node keeping its object: a read answered with n nodes
 * costs O(n), not O(n²). Messages are taken at their full text (`content`), so the state is right
 * whether or not earlier text was `replaced`. Times are not read here: a {@link RunReader} adds them.
 */
export class RunStateFold {
  #executionId: string | undefined;
  #canvasId: string | undefined;
  #status: ExecutionStatus | undefined;
  #result: RunResult | undefined;
  #reconnecting: Reconnecting | undefined;
  /** In first-seen order: the service's parents-before-children order (service.md §4.1). */
  readonly #nodes = new Map<string, NodeEntry>();
  #files: OutputFile[] = [];
  /** The task nodes, once the plan or an output read told them (see `knowTasks`). */
  #tasks: ReadonlySet<string> | undefined;
  /** An output read has listed the task nodes. */
  #tasksRead = false;
  #state: RunState | undefined = INITIAL_RUN_STATE;

  /**
   * Folds one event in. `elapsedMs` is the run's time at the event, read only for the start of an
   * outage (`reconnecting.since`; default 0).
   */
  apply(event: RunEvent, elapsedMs = 0): void {
    this.#state = undefined;
    switch (event.type) {
      case 'started':
        this.#executionId = event.executionId;
        this.#canvasId = event.canvasId ?? this.#canvasId;
        this.#status = event.status;
        return;
      case 'snapshot':
        this.#adopt(event.state);
        return;
      case 'status':
        this.#status = event.status;
        return;
      case 'node':
        this.#applyNode(event);
        return;
      case 'message':
        this.#applyMessage(event);
        return;
      case 'file':
        this.#files.push(event.file);
        return;
      case 'connection':
        this.#applyConnection(event, elapsedMs);
        return;
      case 'finished':
        this.#applyResult(event.result);
        return;
      default:
        event satisfies never;
    }
  }

  /**
   * The task nodes, from the workflow's plan (its tasks are the task nodes, service.md §5.2) or as an
   * output read lists them (§4.2): from then on they alone count in `progress`, and the total is theirs
   * until the result. The first output read settles them once (a plan it agrees with stays).
   */
  knowTasks(tasks: readonly { readonly nodeId: string }[], from: 'plan' | 'output'): void {
    if (this.#tasks !== undefined && (from === 'plan' || this.#tasksRead)) return;
    const ids = new Set(tasks.map((task) => task.nodeId));
    if (from === 'output') {
      this.#tasksRead = true;
      const known = this.#tasks;
      if (known !== undefined && [...ids].every((id) => known.has(id))) return;
    }
    this.#tasks = ids;
    this.#state = undefined;
    for (const entry of this.#nodes.values()) entry.built = undefined;
  }

  /** The state the events so far make: the same object until the next event. */
  get state(): RunState {
    this.#state ??= this.#build();
    return this.#state;
  }

  /**
   * The same state, not kept by the fold when it was not built yet: for a reader that keeps its own
   * (`RunReader`), so that a watched run holds one state, not two.
   */
  builtState(): RunState {
    return this.#state ?? this.#build();
  }

  #isTask(entry: NodeEntry): boolean {
    return this.#tasks === undefined ? entry.seenWorking : this.#tasks.has(entry.nodeId);
  }

  /** The fold starts over from `state`, which stands for every event before it. */
  #adopt(state: RunState): void {
    this.#executionId = state.executionId;
    this.#canvasId = state.canvasId;
    this.#status = state.status;
    this.#result = state.result;
    this.#reconnecting = state.reconnecting;
    this.#files = [...state.files];
    this.#tasks = undefined;
    this.#tasksRead = false;
    this.#nodes.clear();
    for (const node of state.nodes) {
      this.#nodes.set(node.nodeId, {
        nodeId: node.nodeId,
        title: node.title,
        status: node.status,
        error: node.error,
        seenWorking: node.task,
        messages: node.messages.length === 0 ? undefined : new Map(node.messages.map((message) => [message.messageId, message])),
        built: undefined,
      });
    }
  }

  #applyNode(event: NodeEvent): void {
    const known = this.#nodes.get(event.nodeId);
    // service.md §3.2: a node with no work is `finish` whenever it is seen; any other status, now or
    // before (`previous`), says it does work.
    const seenWorking = event.status !== 'finish' || (event.previous !== undefined && event.previous !== 'finish');
    this.#nodes.set(event.nodeId, {
      nodeId: event.nodeId,
      title: event.title,
      status: event.status,
      error: event.error,
      seenWorking: (known?.seenWorking ?? false) || seenWorking,
      messages: known?.messages,
      built: undefined,
    });
  }

  #applyMessage(event: MessageEvent): void {
    // Messages follow their node's event; a message of a node not seen yet still gets a place.
    const entry = this.#nodes.get(event.nodeId) ?? { nodeId: event.nodeId, title: undefined, status: 'unknown', error: undefined, seenWorking: true, messages: undefined, built: undefined };
    this.#nodes.set(event.nodeId, entry);
    entry.messages ??= new Map<string, MessageState>();
    entry.messages.set(event.messageId, { messageId: event.messageId, role: event.role, content: event.content, reasoningContent: event.reasoningContent });
    entry.seenWorking = true;
    entry.built = undefined;
  }

  /** An outage keeps the `since` of its first failure; a `connection` event without `reconnecting` ends it. */
  #applyConnection(event: ConnectionEvent, elapsedMs: number): void {
    if (event.reconnecting === undefined) {
      this.#reconnecting = undefined;
      return;
    }
    const since = this.#reconnecting?.since ?? Math.max(0, elapsedMs - event.reconnecting.failingForMs);
    this.#reconnecting = { since, attempts: event.reconnecting.attempts, error: event.reconnecting.error };
  }

  /** The result's output lists exactly the task nodes (service.md §4.2): the end settles what was a guess. */
  #applyResult(result: RunResult): void {
    const tasks = new Set(this.#tasks);
    for (const { nodeId } of result.output) {
      tasks.add(nodeId);
      const entry = this.#nodes.get(nodeId);
      if (entry === undefined || entry.seenWorking) continue;
      entry.seenWorking = true;
      entry.built = undefined;
    }
    if (this.#tasks !== undefined && tasks.size > this.#tasks.size) {
      this.#tasks = tasks;
      for (const entry of this.#nodes.values()) entry.built = undefined;
    }
    this.#status = result.status;
    this.#result = result;
    // Read to its end: whatever outage there was is over.
    this.#reconnecting = undefined;
  }

  #built(entry: NodeEntry): NodeState {
    if (entry.built !== undefined) return entry.built;
    const messages = entry.messages === undefined ? [] : [...entry.messages.values()];
    entry.built = {
      nodeId: entry.nodeId,
      ...(entry.title === undefined ? {} : { title: entry.title }),
      status: entry.status,
      ...(entry.error === undefined ? {} : { error: entry.error }),
      messages,
      text: messages.map((message) => message.content).join('\n\n'),
      task: this.#isTask(entry),
    };
    return entry.built;
  }

  #build(): RunState {
    const nodes: NodeState[] = [];
    let succeeded = 0;
    let failed = 0;
    let total = 0;
    for (const entry of this.#nodes.values()) {
      const node = this.#built(entry);
      nodes.push(node);
      if (!node.task) continue;
      total += 1;
      if (node.status === 'finish') succeeded += 1;
      else if (node.status === 'failed') failed += 1;
    }
    // Known tasks count before they show (a plan's, before the first read).
    if (this.#tasks !== undefined) total = this.#tasks.size;
    const fields = { executionId: this.#executionId, canvasId: this.#canvasId, status: this.#status, result: this.#result, reconnecting: this.#reconnecting };
    return assembleState(fields, nodes, [...this.#files], { succeeded, failed, done: succeeded + failed, total }, 0);
  }
}

/**
 * One read of a run, as every consumer of the run sees it: `events`, what the read changed, in order;
 * `state`, the run after it; `seq`, 1, 2, 3… per run, one more per reading (an execution's resume
 * point). A read that changed nothing makes no reading.
 */
export interface RunReading {
  readonly seq: number;
  readonly state: RunState;
  readonly events: readonly RunEvent[];
}

/** The reading each event of a run of this client belongs to; events of any other stream have none. */
const readingOfEvent = new WeakMap<RunEvent, RunReading>();

/** The reading `event` came with, when it is an event of a run of this client (see {@link RunReader}). */
export function readingOf(event: RunEvent): RunReading | undefined {
  return readingOfEvent.get(event);
}

/** `reading`, its events marked as its own (see {@link readingOf}). */
export function withReading(reading: RunReading): RunReading {
  for (const event of reading.events) readingOfEvent.set(event, reading);
  return reading;
}

/** When a run saw each node start and end, on its scheduler (see `seeNodeEvent`). */
function observeTimes(times: Map<string, NodeTimes>, event: RunEvent, now: number): void {
  if (event.type !== 'node') return;
  const known = times.get(event.nodeId);
  const seen = seeNodeEvent(known, event, now);
  if (seen !== undefined && seen !== known) times.set(event.nodeId, seen);
}

/**
 * Each node's `elapsedMs` at `now`: the service's times once the result has them (service.md §4.2),
 * else the observed ones (a running node's grows with `now`; a node not seen starting has none).
 */
function nodesWithTimes(state: RunState, observed: ReadonlyMap<string, NodeTimes>, now: number): readonly NodeState[] {
  const reported = state.result === undefined ? undefined : new Map(state.result.output.map((entry) => [entry.nodeId, durationOf(serviceNodeTimes(entry))]));
  return state.nodes.map((node) => {
    const seen = observed.get(node.nodeId);
    const elapsedMs = reported?.get(node.nodeId) ?? (seen?.startedAt === undefined ? undefined : (seen.endedAt ?? now) - seen.startedAt);
    return elapsedMs === undefined ? node : timedNode(node, elapsedMs);
  });
}

/**
 * `node` with its `elapsedMs`. Not `{ ...node, elapsedMs }`: V8 gives every object made by a literal
 * that begins with a spread a hidden class of its own, some 300 bytes that a watched run would hold
 * for each of its running nodes.
 */
function timedNode(node: NodeState, elapsedMs: number): NodeState {
  return {
    nodeId: node.nodeId,
    ...(node.title === undefined ? {} : { title: node.title }),
    status: node.status,
    ...(node.error === undefined ? {} : { error: node.error }),
    messages: node.messages,
    text: node.text,
    task: node.task,
    elapsedMs,
  };
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * `timedNode` and `assembleState` write every field by name: these fail to compile when `NodeState` or
 * `RunState` gains a field that they would drop.
 */
type Covers<Type, Written extends keyof Type> = [Exclude<keyof Type, Written>] extends [never] ? true : false;
type Holds<Check extends true> = Check;
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a check at compile time, nothing to run
type FieldsWritten = [
  Holds<Covers<NodeState, 'nodeId' | 'title' | 'status' | 'error' | 'messages' | 'text' | 'task' | 'elapsedMs'>>,
  Holds<Covers<RunState, keyof StateFields | 'nodes' | 'files' | 'progress' | 'elapsedMs'>>,
];

/** The fields of a {@link RunState} besides its nodes, files, progress and time; each absent when undefined. */
type StateFields = { readonly [K in 'executionId' | 'canvasId' | 'status' | 'result' | 'cancelling' | 'reconnecting']?: RunState[K] | undefined };

/**
 * A state, its fields in their order, set one by one on a fresh object: a literal that begins with a
 * spread (`{ ...(id === undefined ? {} : { executionId: id }), nodes, … }`) gets a V8 hidden class of
 * its own, some 300 bytes that a watched run would hold with each state it keeps.
 */
function assembleState(fields: StateFields, nodes: readonly NodeState[], files: readonly OutputFile[], progress: TaskProgress, elapsedMs: number): RunState {
  const head: Writable<Partial<RunState>> = {};
  if (fields.executionId !== undefined) head.executionId = fields.executionId;
  if (fields.canvasId !== undefined) head.canvasId = fields.canvasId;
  if (fields.status !== undefined) head.status = fields.status;
  const state: Writable<RunState> = Object.assign(head, { nodes, files, progress, elapsedMs });
  if (fields.result !== undefined) state.result = fields.result;
  if (fields.cancelling !== undefined) state.cancelling = fields.cancelling;
  if (fields.reconnecting !== undefined) state.reconnecting = fields.reconnecting;
  return state;
}

/**
 * Makes a run's readings: each read's events folded into the state after it, timed on the run's
 * scheduler from the reader's making (the run's start). Where a run's states are built: a run's
 * readings (so a late subscriber's snapshot too) and `toRunState()` over any other event stream.
 */
export class RunReader {
  readonly #fold = new RunStateFold();
  readonly #times = new Map<string, NodeTimes>();
  readonly #scheduler: SchedulerLike;
  readonly #since: number;
  #seq = 0;

  constructor(scheduler: SchedulerLike) {
    this.#scheduler = scheduler;
    this.#since = scheduler.now();
  }

  /** The run's task nodes, from the workflow's plan (see `RunStateFold.knowTasks`). */
  knowPlannedTasks(tasks: readonly { readonly nodeId: string }[]): void {
    this.#fold.knowTasks(tasks, 'plan');
  }

  /**
   * The reading of one read's `events`. `tasks`: the task nodes, when the read's output (or an earlier
   * one) listed them (service.md §4.2).
   */
  read(events: readonly RunEvent[], tasks?: readonly { readonly nodeId: string }[]): RunReading {
    const now = this.#scheduler.now();
    for (const event of events) {
      this.#fold.apply(event, now - this.#since);
      observeTimes(this.#times, event, now);
    }
    if (tasks !== undefined) this.#fold.knowTasks(tasks, 'output');
    this.#seq += 1;
    const state = this.#fold.builtState();
    return { seq: this.#seq, state: assembleState(state, nodesWithTimes(state, this.#times, now), state.files, state.progress, now - this.#since), events };
  }
}

// --- a run's events as states --------------------------------------------------------------------
/**
 * Options of {@link toRunState}.
 *
 * @example
 * ```ts
 * const options: RunStateOptions = { sampleMs: 5_000, scheduler: testScheduler };
 * ```
 */
export interface RunStateOptions {
  /**
   * Drives the sampling, and for events that are not a run of this client the end of a read's batch
   * and the times. Default `asapScheduler`: such a read's state is emitted as soon as its events have
   * all arrived.
   */
  readonly scheduler?: SchedulerLike;
  /**
   * Emit at most one state per period, for a display refreshed on a timer; the final state always
   * arrives, at once (see {@link sampleRunState}). Default: every poll's state.
   */
  readonly sampleMs?: number;
}

/**
 * A run's events as the states a UI shows — one state per read of the execution: nodes with status,
 * title, text and elapsed time in order, files, progress over task nodes (`succeeded`, `failed`,
 * `total`), the run's elapsed time, status, and the result once finished.
 *
 * A run of this client carries its state with its events: each read's state is emitted with the
 * read's last event, exactly as the run built it, so no state shows half a read (never `finish` while
 * a node still reads `executing`, never 100 % while the first task runs) and every subscriber of a
 * shared run sees the same states. Any other stream of `RunEvent`s is folded: events that arrive
 * together, synchronously, are one read, whose state is emitted once that batch is over (on
 * `scheduler`, at once when the stream completes or errors). A `snapshot` event stands for every
 * event before it.
 *
 * @example
 * ```ts
 * client.run('c-1').pipe(toRunState({ sampleMs: 5_000 })).subscribe((state) => {
 *   render(`${state.progress.succeeded}/${state.progress.total}`, state.nodes);
 * });
 * ```
 */
export function toRunState(options: RunStateOptions = {}): OperatorFunction<RunEvent, RunState> {
  objectArgument('options', options);
  const scheduler = schedulerArgument('scheduler', options.scheduler) ?? asapScheduler;
  const sample = options.sampleMs === undefined ? undefined : sampleRunState(options.sampleMs, scheduler);
  return (source) => {
    const states = statesOf(source, scheduler);
    return sample === undefined ? states : states.pipe(sample);
  };
}

function statesOf(source: Observable<RunEvent>, scheduler: SchedulerLike): Observable<RunState> {
  return new Observable<RunState>((subscriber) => {
    const reader = new RunReader(scheduler);
    // Events of another stream, to fold once their batch is over.
    let batch: RunEvent[] = [];
    // The run's reading whose events are arriving: its state goes out with its last event, or at the
    // end of the batch when that one was filtered out before this operator.
    let reading: RunReading | undefined;
    // The state of the run's last reading, which the events of another stream after it build on.
    let adopted: RunState | undefined;
    let batchEnd: Subscription | undefined;

    const emit = (): void => {
      batchEnd?.unsubscribe();
      batchEnd = undefined;
      if (reading !== undefined) {
        adopted = reading.state;
        reading = undefined;
        subscriber.next(adopted);
        return;
      }
      if (batch.length === 0) return;
      const events = adopted === undefined ? batch : [{ type: 'snapshot' as const, executionId: adopted.executionId ?? '', state: adopted }, ...batch];
      batch = [];
      adopted = undefined;
      subscriber.next(reader.read(events).state);
    };

    const subscription = source.subscribe({
      next: (event) => {
        const own = readingOf(event);
        if (own === undefined) {
          if (reading !== undefined) emit();
          batch.push(event);
        } else {
          if (batch.length > 0 || (reading !== undefined && reading !== own)) emit();
          reading = own;
          if (event === own.events.at(-1)) {
            emit();
            return;
          }
        }
        batchEnd ??= scheduler.schedule(emit);
      },
      error: (error: unknown) => {
        emit();
        subscriber.error(error);
      },
      complete: () => {
        emit();
        subscriber.complete();
      },
    });
    return () => {
      subscription.unsubscribe();
      batchEnd?.unsubscribe();
    };
  });
}

/**
 * Thins a run's states for a display refreshed on a timer: the first state at once, then at most one
 * every `periodMs` — the latest, at the end of each period — and the final state always, at once: a
 * state with its `result` is delivered as it comes, and so is the first that says `cancelling`, and whatever is held back when the run completes
 * or errors is delivered before that. Timers run on `scheduler` (the client's, in tests a
 * `TestScheduler`).
 *
 * @example
 * ```ts
 * client.run('c-1').pipe(toRunState(), sampleRunState(5_000)).subscribe(updateCard);
 * ```
 */
export function sampleRunState(periodMs: number, scheduler: SchedulerLike = asyncScheduler): MonoTypeOperatorFunction<RunState> {
  timerDelay('sampleMs', periodMs);
  return (source) =>
    new Observable<RunState>((subscriber) => {
      let held: RunState | undefined;
      let period: Subscription | undefined;
      let cancelling = false;

      const deliver = (state: RunState): void => {
        held = undefined;
        cancelling = state.cancelling === true;
        period?.unsubscribe();
        period = scheduler.schedule(endPeriod, periodMs);
        subscriber.next(state);
      };
      function endPeriod(): void {
        period = undefined;
        if (held !== undefined) deliver(held);
      }
      const deliverHeld = (): void => {
        period?.unsubscribe();
        period = undefined;
        if (held !== undefined) subscriber.next(held);
        held = undefined;
      };

      const subscription = source.subscribe({
        next: (state) => {
          // The end, and a cancel starting, show at once.
          if (period === undefined || state.result !== undefined || (state.cancelling === true && !cancelling)) deliver(state);
          else held = state;
        },
        error: (error: unknown) => {
          deliverHeld();
          subscriber.error(error);
        },
        complete: () => {
          deliverHeld();
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        period?.unsubscribe();
      };
    });
}

// --- a run's state for UI frameworks -------------------------------------------------------------
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
   * handle's `events` for a run that must outlive the components showing it) and forgets its state, so
   * that a listener coming later sees `undefined` until the run it subscribes again says more. A
   * listener added again within that task, as React's StrictMode does when it mounts a component
   * twice, keeps the run going.
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
  observableArgument('run$', run$);
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
          // A run left before its end is over (a `client.run` is aborted): a listener that comes later
          // subscribes it again — another execution — and must not be shown this one's state meanwhile.
          if (!ended) snapshot = undefined;
        });
      };
    },
    getSnapshot: () => snapshot,
    getError: () => error,
  };
}
