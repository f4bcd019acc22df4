import { Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { OUTLIER_SIGMAS } from '../budget/duration-model.js';
import { readDueAt } from '../budget/budget-core.js';
import type { ReadNeed } from '../domain/budget.js';
import type { DurationEstimate, DurationModel } from '../domain/durations.js';
import type { ExecutionOutput, ExecutionSnapshot, ExecutionStatus, Logger, NodeExecution, NodeStatus, OutputNode } from '../domain/model.js';
import { durationOf, isNodeDone, LONGEST_NODE_MS, serviceNodeTimes } from '../domain/node-times.js';
import { DEFAULTS, type PollInterval } from '../domain/options.js';
import { isServerError } from '../errors/api-errors.js';
import { isFlowstreamError } from '../errors/flowstream-error.js';
import { isNetworkError, isTimeoutError } from '../errors/transport-errors.js';
import { InvalidArgumentError, isResponseValidationError, knownKeys, objectArgument, timerDelay } from '../errors/validation-errors.js';
import type { ConnectionEvent, RunEvent } from './events.js';
import type { ExecutionSource, FailedBranches, ReadOptions } from './run-lifecycle.js';
import { announceHeldFiles, diffOutput, diffStatus, type DiffWarning, type ExecutionView, initialView, isExecutionOver, runResultOf, type ViewDiff } from './execution-view.js';

/*
 * When a run's next read goes, for one execution until it is terminal: the poll's rules as a pure
 * reducer (`reducePoll`: status or output, and when), the cadence, the foresight that times reads by
 * learned node durations, how reads go through an outage, and the shell that waits and reads
 * (`pollExecution`). `reducerShell` runs this reducer and the run's others (a run's life, a claimed key).
 */

// --- the poll's rules: a pure reducer ------------------------------------------------------------
interface PollRules {
  readonly executionId: string;
  readonly canvasId: string | undefined;
  readonly bounds: CadenceBounds;
  readonly output: OutputMode;
  /** `'follow'`: a failed execution is read on until its last running branch ends (`RunOptions.onFailedBranches`). */
  readonly onFailedBranches: FailedBranches;
  /** The learned durations of the run's workflow; absent: the cadence alone times the reads. */
  readonly estimateOf?: EstimateOf | undefined;
}

/** What one read found, for the cadence and the output policy. */
interface ReadFacts {
  readonly now: number;
  /** A status moved: the cadence goes back to its fastest. */
  readonly changed: boolean;
  readonly output: boolean;
  /** A node ended (its last text and files are still to be read, service.md §4.6). */
  readonly nodeEnded: boolean;
  /** The node events of the read, for the node times (foresight, below). */
  readonly transitions: readonly RunEvent[];
  /** The execution is over: this read's output, if any, is the run's last. */
  readonly terminal?: boolean;
}

/** What the poll is doing: at most one read at a time, and no wait while one is on its way. */
type PollActivity =
  | { readonly kind: 'idle' }
  | { readonly kind: 'waiting' }
  | { readonly kind: 'status' }
  /** The output read that completes a status read, whose view and facts it carries. */
  | { readonly kind: 'output-after-status'; readonly view: ExecutionView; readonly facts: ReadFacts }
  | { readonly kind: 'output-alone' }
  | { readonly kind: 'ended' };

interface PollPlan {
  readonly rules: PollRules;
  /** Everything learned of the execution so far, as of the last completed read. */
  readonly view: ExecutionView;
  readonly cadence: CadenceState;
  readonly lastOutputAt: number | undefined;
  /** A node ended after the last output read. */
  readonly outputBehind: boolean;
  /** When the reads first found every node done while the execution still ran. */
  readonly settlingSince: number | undefined;
  readonly activity: PollActivity;
  /** Asked to read now while a read was on its way: the next read is the status, at once. */
  readonly poked: boolean;
  /** When the last read answered (for a start, when the start did): the bracket of what the next read sees. */
  readonly lastReadAt: number | undefined;
  /** Node times seen, and the wait for the next change (foresight, below). */
  readonly foresight: Foresight;
}

/** `at`: the scheduler's time. `random`, in [0, 1), spreads the next wait (`nextCadence`). */
export type PollInput =
  /** `at`: when the poll begins; for a start, its answer's time, the bracket of the first read. */
  | { readonly type: 'begin'; readonly at: number }
  | { readonly type: 'wake'; readonly at: number }
  | { readonly type: 'poke' }
  | { readonly type: 'status'; readonly snapshot: ExecutionSnapshot; readonly at: number; readonly random: number }
  | { readonly type: 'output'; readonly output: ExecutionOutput; readonly at: number; readonly random: number };

export type PollCommand =
  /**
   * Wait for the next read: what it needs (its bounds from the last read, how likely a change is).
   * The request budget holds the read until its time (`AccountBudget.needRead`); without one the run
   * waits until `readDueAt(need)` (the same rule) and then reads.
   */
  | { readonly type: 'wait'; readonly need: ReadNeed }
  /** `need`: a read that goes at once, registered with the budget as such (the output read that completes the end). */
  | { readonly type: 'read'; readonly endpoint: 'status' | 'output'; readonly need?: ReadNeed }
  /** Durations of nodes that finished, for the model. */
  | { readonly type: 'learn'; readonly durations: readonly LearnedDuration[] }
  /** One read's events; `view`: what the run knows after it, of which the reading is made. */
  | { readonly type: 'emit'; readonly events: readonly RunEvent[]; readonly view: ExecutionView }
  | { readonly type: 'warn'; readonly warning: DiffWarning }
  | { readonly type: 'end' };

type PollStep = Step<PollPlan, PollCommand>;

/** `startedStatus`: what the start answered; without one (a `watch`) the first status read is announced as `started`. */
export function initialPoll(rules: PollRules, startedStatus: ExecutionStatus | undefined): PollPlan {
  return {
    rules,
    view: initialView(rules.executionId, startedStatus),
    cadence: startCadence(rules.bounds),
    lastOutputAt: undefined,
    outputBehind: false,
    settlingSince: undefined,
    activity: { kind: 'idle' },
    poked: false,
    lastReadAt: undefined,
    foresight: NO_FORESIGHT,
  };
}

/**
 * What to read next, and when, for one execution until it is terminal: its status on the adaptive
 * cadence, its output only when it can have changed (`shouldReadOutput` below), ending with `finished`.
 * Status events go out as soon as the status answers, before the slower output read (service.md §2.5).
 */
export function reducePoll(plan: PollPlan, input: PollInput): PollStep {
  const { activity } = plan;
  switch (input.type) {
    case 'begin':
      if (activity.kind !== 'idle') return stay(plan);
      // A fresh start has just told us its status: the first read waits one fast interval. A watch reads at once.
      if (plan.view.status === undefined) return { state: { ...plan, activity: { kind: 'waiting' } }, commands: [{ type: 'wait', need: { since: input.at, minMs: 0, wishMs: 0, maxMs: 0 } }] };
      // A start's nodes began when it was answered, so its first read brackets them.
      return { state: { ...plan, activity: { kind: 'waiting' }, lastReadAt: input.at }, commands: [{ type: 'wait', need: fastNeed(plan.rules.bounds, input.at) }] };
    case 'wake':
      if (activity.kind !== 'waiting') return stay(plan);
      return readOutputAlone(plan, input.at) ? startRead(plan, 'output-alone') : startRead(plan, 'status');
    case 'poke':
      if (activity.kind === 'waiting') return startRead(plan, 'status');
      return activity.kind === 'idle' || activity.kind === 'ended' ? stay(plan) : { state: { ...plan, poked: true }, commands: [] };
    case 'status':
      return activity.kind === 'status' ? statusAnswered(plan, input.snapshot, input.at, input.random) : stay(plan);
    case 'output':
      if (activity.kind === 'output-after-status') return conclude(plan, diffOutput(activity.view, input.output), activity.facts, input.random);
      return activity.kind === 'output-alone' ? outputAloneAnswered(plan, input.output, input.at, input.random) : stay(plan);
    default:
      return input satisfies never;
  }
}

function stay(plan: PollPlan): PollStep {
  return { state: plan, commands: [] };
}

/**
 * The output read after a status read that showed the end: the run's last read, which the `finished`
 * event waits on, certain to be worth it — it goes at once, on a tight budget too.
 */
function endingNeed(since: number): ReadNeed {
  return { since, minMs: 0, wishMs: 0, maxMs: 0, certain: true };
}

/** The first read of a start: one fast interval after its answer. */
function fastNeed(bounds: CadenceBounds, since: number): ReadNeed {
  return { since, minMs: bounds.minMs, wishMs: bounds.minMs, maxMs: Math.max(bounds.minMs, bounds.maxMs) };
}

function startRead(plan: PollPlan, what: 'status' | 'output-alone'): PollStep {
  return {
    state: { ...plan, activity: { kind: what }, poked: false },
    commands: [{ type: 'read', endpoint: what === 'status' ? 'status' : 'output' }],
  };
}

function statusesOf(view: ExecutionView): NodeStatus[] {
  return [...view.nodes.values()].map((node) => node.status);
}

function sinceLastOutput(plan: PollPlan, now: number): number | undefined {
  return plan.lastOutputAt === undefined ? undefined : now - plan.lastOutputAt;
}

function readOutputAlone(plan: PollPlan, now: number): boolean {
  return shouldReadOutputAlone({
    mode: plan.rules.output,
    nodes: statusesOf(plan.view),
    sinceLastOutputMs: sinceLastOutput(plan, now),
    nodeEndedSinceOutput: plan.outputBehind,
  });
}

function warnings(diff: ViewDiff): PollCommand[] {
  return diff.warnings.map((warning) => ({ type: 'warn', warning }));
}

function emit(events: readonly RunEvent[], view: ExecutionView): PollCommand[] {
  return events.length === 0 ? [] : [{ type: 'emit', events, view }];
}

/** The status, then the output when it can have changed (`shouldReadOutput`). */
function statusAnswered(plan: PollPlan, snapshot: ExecutionSnapshot, now: number, random: number): PollStep {
  const { executionId } = plan.rules;
  const announced: { view: ExecutionView; events: RunEvent[] } =
    plan.view.status === undefined
      ? { view: { ...plan.view, status: snapshot.status }, events: [{ type: 'started', executionId, status: snapshot.status }] }
      : { view: plan.view, events: [] };
  const status = diffStatus(announced.view, snapshot);
  const events = [...announced.events, ...status.events];
  // The end, for the output: a failed execution `follow` reads on (`readsOn`) ends when its branches do.
  const terminal = isExecutionOver(status.view.status) && !readsOn(plan.rules, status.view);
  const output = shouldReadOutput({
    mode: plan.rules.output,
    terminal,
    nodes: statusesOf(status.view),
    sinceLastOutputMs: sinceLastOutput(plan, now),
    outputFinal: status.view.status === 'finish' && outputIsFinal(plan.view),
  });
  const nodeEnded = status.events.some((event) => event.type === 'node' && isNodeDone(event.status));
  const facts: ReadFacts = { now, changed: events.length > 0, output, nodeEnded, transitions: status.events, terminal };
  if (!output) return conclude(plan, { ...status, events }, facts, random);
  return {
    state: { ...plan, activity: { kind: 'output-after-status', view: status.view, facts } },
    commands: [...warnings(status), ...emit(events, status.view), { type: 'read', endpoint: 'output', ...(facts.terminal ? { need: endingNeed(now) } : {}) }],
  };
}

/**
 * The output alone, its task nodes standing in for the status read (see `shouldReadOutputAlone`):
 * `diffOutput` moves them first, so its events begin with their transitions.
 */
function outputAloneAnswered(plan: PollPlan, output: ExecutionOutput, now: number, random: number): PollStep {
  const diff = diffOutput(plan.view, output);
  const transitions = diff.events.filter((event) => event.type === 'node');
  return conclude(plan, diff, { now, changed: transitions.length > 0, output: true, nodeEnded: false, transitions }, random);
}

/**
 * After a read that ended with `diff`: `finished` when the execution is terminal, otherwise its events
 * and the next read. A moved status sets the cadence back to its fastest; a new message does not: it
 * says the node is busy, not that its status will change soon (service.md §4.4).
 */
function conclude(plan: PollPlan, diff: ViewDiff, facts: ReadFacts, random: number): PollStep {
  const { view } = diff;
  const { rules } = plan;
  const nodes = [...view.nodes.values()];
  const estimateOf = rules.estimateOf ?? (() => undefined);
  const foresight = countRead(observeTransitions(plan.foresight, facts.transitions, plan.lastReadAt, facts.now, estimateOf), facts.changed, facts.now);
  if (isExecutionOver(view.status) && !readsOn(rules, view)) {
    const last = announceHeldFiles(view);
    const finished: RunEvent = { type: 'finished', executionId: rules.executionId, result: runResultOf(last.view, view.status, rules.canvasId) };
    const durations = rules.estimateOf === undefined ? [] : learnedDurations(foresight, view.outputNodes, new Set(idsAt(nodes, 'finish')));
    const learn: PollCommand[] = durations.length === 0 ? [] : [{ type: 'learn', durations }];
    return { state: { ...plan, view: last.view, activity: { kind: 'ended' }, foresight }, commands: [...warnings(diff), ...emit([...diff.events, ...last.events, finished], last.view), ...learn, { type: 'end' }] };
  }
  // service.md §3.3: every node done while the execution still says `executing` means the next server
  // tick ends it; read again soon rather than declare the end ourselves.
  const allDone = nodes.length > 0 && nodes.every((node) => isNodeDone(node.status));
  const settlingSince = allDone ? (plan.settlingSince ?? facts.now) : undefined;
  const settling = settlingSince !== undefined && facts.now - settlingSince < SETTLING_WINDOW_MS;
  const pace: Pace = facts.changed ? 'changed' : settling ? 'settling' : 'quiet';
  const cadence = nextCadence(rules.bounds, plan.cadence, pace, () => random);
  // A change certain within a tick — the end (service.md §3.3), or, when a node ended and nothing runs,
  // a child's start (§3.2) — is one the model need not time: its read is certain to be worth it, and
  // goes at once on a tight budget too. While other nodes run, a node's end starts nothing for sure
  // (the status lists no edges, §4.1): those reads come at the cadence's fast pace, in their turn.
  const executing = idsAt(nodes, 'executing');
  const certain = allDone || (executing.length === 0 && awaitsStart(facts.transitions));
  const foreseen = certain ? undefined : foreseeRead(foresight, executing, facts.now, rules.bounds, estimateOf);
  const need: ReadNeed = {
    since: facts.now,
    minMs: rules.bounds.minMs,
    wishMs: foreseen?.waitMs ?? cadence.waitMs,
    maxMs: Math.max(rules.bounds.minMs, rules.bounds.maxMs),
    // The model's timing for a shorter share of the account, should the budget give the run one.
    ...(foreseen === undefined ? {} : { likelyAt: foreseen.likelyAt, atShare: (shareMs: number) => foreseeRead(foresight, executing, facts.now, rules.bounds, estimateOf, shareMs) ?? foreseen }),
    ...(certain ? { certain } : {}),
  };
  const next: PollPlan = {
    ...plan,
    view,
    cadence: foreseen === undefined ? cadence.state : { delayMs: foreseen.waitMs },
    lastReadAt: facts.now,
    foresight,
    lastOutputAt: facts.output ? facts.now : plan.lastOutputAt,
    outputBehind: !facts.output && (plan.outputBehind || facts.nodeEnded),
    settlingSince,
    activity: { kind: 'waiting' },
    poked: false,
  };
  // A poke during the read (an abort answered): the end is read at once, with the status.
  const then: PollStep = plan.poked ? startRead(next, 'status') : { state: next, commands: [{ type: 'wait', need }] };
  return { state: then.state, commands: [...warnings(diff), ...emit(diff.events, view), ...then.commands] };
}

/**
 * service.md §3.3: a failed execution's other branches may still run; with `onFailedBranches: 'follow'`
 * the run reads on until they end, and only then reads its final output.
 */
function readsOn(rules: PollRules, view: ExecutionView): boolean {
  return rules.onFailedBranches === 'follow' && view.status === 'failed' && [...view.nodes.values()].some((node) => node.status === 'executing' || node.status === 'waiting');
}

/** The ids of the `nodes` at `status`. */
function idsAt(nodes: readonly NodeExecution[], status: NodeStatus): string[] {
  return nodes.filter((node) => node.status === status).map((node) => node.nodeId);
}

/**
 * A read that saw a node end and none start: a child starts on the service's next tick (service.md
 * §3.2), a change the model cannot time, so the cadence reads again soon, as without a model.
 */
function awaitsStart(transitions: readonly RunEvent[]): boolean {
  const nodeEvents = transitions.filter((event) => event.type === 'node');
  return nodeEvents.some((event) => isNodeDone(event.status)) && !nodeEvents.some((event) => event.status === 'executing');
}

/**
 * `stream`: read the output while task nodes run, so message events arrive as the text does.
 * `final`: read it once, at the end.
 */
export type OutputMode = 'stream' | 'final';

/**
 * While nodes run, the service persists new messages in batches about every 3 s (service.md §4.4) and
 * the output endpoint is slow (§2.5): reading it more often than this would mostly read nothing new.
 */
export const OUTPUT_SPACING_MS = 3000;

export interface OutputQuestion {
  readonly mode: OutputMode;
  /** The execution reached `finish` or `failed`: the last read, for the final messages and files. */
  readonly terminal: boolean;
  /** The nodes as the status read shows them. */
  readonly nodes: readonly NodeStatus[];
  /** Time since the last output read; `undefined` when it was never read. */
  readonly sinceLastOutputMs: number | undefined;
  /**
   * The execution ended in `finish` and the last output read already holds its final output
   * (`outputIsFinal`): the end reads nothing more.
   */
  readonly outputFinal?: boolean;
}

/**
 * Whether a status read goes on to read the output: only when it can have changed (service.md §2.5).
 * At the end, for the final messages and files, unless the last output read already showed them all
 * (`outputFinal`): then the run's end is its one status read. In `stream` mode also, spaced, while a node
 * executes, but only when the next read cannot be the output alone (`shouldReadOutputAlone`: a node
 * failed or has a status we do not know); otherwise the text comes with that next read, one request
 * instead of two.
 */
export function shouldReadOutput(question: OutputQuestion): boolean {
  if (question.terminal) return question.outputFinal !== true;
  switch (question.mode) {
    case 'final':
      return false;
    case 'stream':
      return (
        question.nodes.some((status) => status === 'executing') &&
        !outputShowsEveryChange(question.nodes) &&
        (question.sinceLastOutputMs ?? Infinity) >= OUTPUT_SPACING_MS
      );
    default:
      return question.mode satisfies never;
  }
}

/**
 * Whether the last output read holds the run's final output: it listed every task node (service.md
 * §4.2) in `finish`, and every file it listed had its link. A finished node's messages are all there
 * and never change again (§4.4), its files are listed once it is `finish` (§4.6), and only task nodes
 * are in the output: another output read at the end would find nothing new. A streaming run whose
 * output read alone saw the last node end (`shouldReadOutputAlone`) so ends with one status read.
 */
export function outputIsFinal(view: ExecutionView): boolean {
  return view.outputNodes.length > 0 && view.outputNodes.every((node) => node.status === 'finish') && view.heldFiles.size === 0;
}

export interface OutputAloneQuestion {
  readonly mode: OutputMode;
  /** The nodes as the run last saw them. */
  readonly nodes: readonly NodeStatus[];
  /** Time since the last output read; `undefined` when it was never read. */
  readonly sinceLastOutputMs: number | undefined;
  /** A node ended after the last output read: its last messages and its files are there to read (§4.6). */
  readonly nodeEndedSinceOutput: boolean;
}

/**
 * Whether the next read can be the output alone, without the status: in `stream` mode, while a node
 * executes, when the output is due (spaced as above, or a node has ended since it was last read) and
 * the output shows every change the status could (`outputShowsEveryChange`). So a streaming run
 * spends one request per read, as a run that reads its output only at the end does.
 */
export function shouldReadOutputAlone(question: OutputAloneQuestion): boolean {
  return (
    question.mode === 'stream' &&
    outputShowsEveryChange(question.nodes) &&
    (question.nodeEndedSinceOutput || (question.sinceLastOutputMs ?? Infinity) >= OUTPUT_SPACING_MS)
  );
}

/**
 * Whether an output read can stand in for a status read, from nodes at these statuses. The output
 * lists every task node with its status (service.md §4.2), the only nodes that execute (§3.2; a
 * content node's one step, `init → finish`, waits for the next status read); what it lacks is the
 * execution's status, which turns terminal only after a node failed or when none is pending or
 * executing (§3.3). So: some node still executes, none failed, and none has a status we do not know
 * (it might have ended the execution too).
 */
function outputShowsEveryChange(nodes: readonly NodeStatus[]): boolean {
  return nodes.some((status) => status === 'executing') && !nodes.some((status) => status === 'failed' || status === 'unknown');
}

export type { PollInterval };

export interface CadenceBounds {
  readonly minMs: number;
  readonly maxMs: number;
}

/** The default bounds (`DEFAULTS.polling`, where their reasons are written). */
export const DEFAULT_POLL_INTERVAL: CadenceBounds = DEFAULTS.polling;

/** Growth of the wait per quiet read. */
const BACKOFF_FACTOR = 1.5;

/** Each wait is spread ±20% so that runs started together do not poll in lockstep. */
const JITTER = 0.2;

/**
 * How long "every node done, execution still `executing`" counts as settling: two server ticks
 * (service.md §3.3). Longer than that the execution is stuck, not settling, and the reads back off again.
 */
const SETTLING_WINDOW_MS = 3000;

/**
 * Fills in the run's bounds from the client's, then the defaults. Each given bound must be 0 or a
 * number of ms a timer keeps (see `timerDelay`), and a `minMs` above the `maxMs` given beside it is a mistake (`InvalidArgumentError`
 * naming `pollInterval` or `polling`); a `maxMs` that comes from a default and is below `minMs` is raised to it.
 */
export function cadenceBounds(interval: PollInterval = {}, defaults: PollInterval = {}): CadenceBounds {
  checkInterval(defaults, 'polling');
  checkInterval(interval, 'pollInterval');
  const minMs = interval.minMs ?? defaults.minMs ?? DEFAULT_POLL_INTERVAL.minMs;
  const maxMs = Math.max(minMs, interval.maxMs ?? defaults.maxMs ?? DEFAULT_POLL_INTERVAL.maxMs);
  return { minMs, maxMs };
}

function checkInterval(interval: PollInterval, name: string): void {
  knownKeys(name, objectArgument(name, interval), ['minMs', 'maxMs']);
  for (const key of ['minMs', 'maxMs'] as const) {
    const value: unknown = interval[key];
    // 0 reads again at once: fine behind a budget that paces, or against a test double.
    if (value !== undefined && value !== 0) timerDelay(`${name}.${key}`, value);
  }
  if (interval.minMs !== undefined && interval.maxMs !== undefined && interval.minMs > interval.maxMs) {
    throw new InvalidArgumentError(name, `minMs (${String(interval.minMs)}) exceeds maxMs (${String(interval.maxMs)})`);
  }
}

/**
 * The pace the last read sets for the cadence: `changed` (the execution or a node changed status), `settling` (every node is done but the
 * execution has not turned terminal yet, service.md §3.3: the next tick will say `finish`), or `quiet`.
 */
export type Pace = 'changed' | 'settling' | 'quiet';

/** The un-jittered wait the cadence has backed off to. */
interface CadenceState {
  readonly delayMs: number;
}

export function startCadence(bounds: CadenceBounds): CadenceState {
  return { delayMs: bounds.minMs };
}

/**
 * The wait before the next read and the cadence after it: back to the fastest after a change or while
 * settling, otherwise backing off exponentially. `random` (in [0, 1), injected for tests) spreads the
 * wait by ±`JITTER`; the wait always stays within the bounds.
 */
export function nextCadence(
  bounds: CadenceBounds,
  state: CadenceState,
  pace: Pace,
  random: () => number,
): { readonly waitMs: number; readonly state: CadenceState } {
  const delayMs = pace === 'quiet' ? Math.min(bounds.maxMs, state.delayMs * BACKOFF_FACTOR) : bounds.minMs;
  const spread = delayMs * (1 + JITTER * (2 * random() - 1));
  const waitMs = Math.round(Math.min(bounds.maxMs, Math.max(bounds.minMs, spread)));
  return { waitMs, state: { delayMs } };
}

/** What a pure reducer answers to one event: its next state and the commands for its shell to perform, in order. */
export interface Step<State, Command> {
  readonly state: State;
  readonly commands: readonly Command[];
}

/**
 * The effectful shell of a pure reducer `(state, event) → { state, commands }`: reduces each
 * dispatched event and performs its commands in order. An event raised while commands are performed
 * (a synchronous answer, a subscriber that leaves on an event) waits for them to finish, so every event
 * meets the state its predecessors left.
 */
export function reducerShell<State, Event, Command>(
  reduce: (state: State, event: Event) => Step<State, Command>,
  initial: State,
  perform: (command: Command) => void,
): (event: Event) => void {
  let state = initial;
  // Events raised while commands are performed, made when the first one is: a run holds two shells
  // for its whole life, and an array once pushed to keeps room for 16 more.
  let queue: Event[] | undefined;
  let performing = false;
  return (event) => {
    if (performing || queue !== undefined) {
      (queue ??= []).push(event);
      if (performing) return;
    }
    performing = true;
    try {
      for (let next = queue === undefined ? event : queue.shift(); next !== undefined; next = queue?.shift()) {
        const step = reduce(state, next);
        state = step.state;
        for (const command of step.commands) perform(command);
      }
      queue = undefined;
    } finally {
      performing = false;
    }
  };
}

// --- foresight: reads timed by learned durations -------------------------------------------------
/*
 * What a run knows of its nodes' times, for learned durations: when each node was seen to
 * start and end, bracketed by the reads around it, and — once the model knows the nodes that are
 * running — where its next read goes (below, "Where the next read goes"), on the little of the
 * log-normal distribution that takes (at the end of this section).
 */

/** A moment known to lie within `widthMs` before `at`'s bracket end; `at` is the best guess. */
interface Bracketed {
  readonly at: number;
  readonly widthMs: number;
}

/** When a node was seen starting and ending, each within its bracket. */
interface BracketedTimes {
  readonly start?: Bracketed;
  readonly end?: Bracketed;
}

/** The node's estimate, for the run's canvas; `undefined` while the model has none (or there is no model). */
type EstimateOf = (nodeId: string) => DurationEstimate | undefined;

/** What the run has seen of its nodes' times, and the state of its wait for the next change. */
interface Foresight {
  readonly nodes: ReadonlyMap<string, BracketedTimes>;
  /** The read that saw the last change (or the start): the wait for the next change began there. */
  readonly waitingSince: number | undefined;
  /** Reads since then. */
  readonly readsSpent: number;
  /**
   * False once a node of this run ended where its estimate said it all but could not (beyond
   * `OUTLIER_SIGMAS`): the model is wrong for this run, which goes on at the cadence alone.
   */
  readonly trusted: boolean;
}

const NO_FORESIGHT: Foresight = { nodes: new Map(), waitingSince: undefined, readsSpent: 0, trusted: true };

/** A node's log-duration this many σ from its estimate's median is out of the model's reach. */
function beyond(estimate: DurationEstimate, durationMs: number): boolean {
  return Math.abs(Math.log(Math.max(1, durationMs) / estimate.medianMs)) > OUTLIER_SIGMAS * estimate.logSigma;
}

/**
 * The moment within (`from`, `to`] a node that started at `startedAt` most likely ended, by its
 * estimate: the median of its end given that it fell in the bracket. Without an estimate, the middle.
 */
function endWithin(from: number, to: number, startedAt: number | undefined, estimate: DurationEstimate | undefined): number {
  if (startedAt === undefined || estimate === undefined) return (from + to) / 2;
  const still = (at: number): number => Math.exp(logSurvival(estimate, at - startedAt));
  const half = (still(from) + still(to)) / 2;
  let low = from;
  let high = to;
  for (let i = 0; i < 30; i += 1) {
    const middle = (low + high) / 2;
    if (still(middle) > half) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}

/**
 * Notes the transitions a read at `now` showed (the node events of its diff; the read before was at
 * `previousAt`): a node first seen done ended in the bracket, a node first seen executing started
 * when the last of the nodes that ended in the same bracket did (service.md §3.2: a node starts on the
 * service's next tick, within about 1.5 s of its parents' end), or in the middle of the bracket when
 * none did. Without a bracket (a watch's first read) nothing is guessed.
 */
function observeTransitions(foresight: Foresight, events: readonly RunEvent[], previousAt: number | undefined, now: number, estimateOf: EstimateOf): Foresight {
  if (previousAt === undefined) return foresight;
  const nodes = new Map(foresight.nodes);
  const widthMs = now - previousAt;
  let lastEnd: number | undefined;
  let { trusted } = foresight;
  for (const event of events) {
    if (event.type !== 'node' || !isNodeDone(event.status)) continue;
    const known = nodes.get(event.nodeId);
    if (known?.end !== undefined) continue;
    const estimate = estimateOf(event.nodeId);
    const startedAt = known?.start?.at;
    // Judged only on the bracket's own ends: a node found done in [from, to] lasted at least from − start, at most to − start.
    if (event.status === 'finish' && estimate !== undefined && startedAt !== undefined && beyond(estimate, previousAt - startedAt) && beyond(estimate, now - startedAt)) trusted = false;
    const at = endWithin(previousAt, now, startedAt, estimate);
    nodes.set(event.nodeId, { ...known, end: { at, widthMs } });
    lastEnd = Math.max(lastEnd ?? at, at);
  }
  for (const event of events) {
    if (event.type !== 'node' || event.status !== 'executing' || nodes.get(event.nodeId)?.start !== undefined) continue;
    nodes.set(event.nodeId, { start: { at: lastEnd ?? (previousAt + now) / 2, widthMs } });
  }
  return { ...foresight, nodes, trusted };
}

/** The read at `now` is one more of the wait, or, when it saw a change, the first of a new one. */
function countRead(foresight: Foresight, changed: boolean, now: number): Foresight {
  return changed || foresight.waitingSince === undefined ? { ...foresight, waitingSince: now, readsSpent: 1 } : { ...foresight, readsSpent: foresight.readsSpent + 1 };
}

/**
 * Where the next read goes when the model knows every running node and when it started; `undefined`
 * (the cadence decides, exactly as without a model) otherwise: no node executing, a node running past
 * `OUTLIER_SIGMAS` beyond its median, or a run whose nodes have proved the model wrong.
 * The run's allowance is one read per the bounds' maximum, its quiet pace, or per `shareMs` when the
 * budget offers the run that shorter share of the account (`ReadNeed.atShare`): the model spends as
 * many reads as the cadence would, where changes are likely. Its longest wait is `FLOOR_INTERVALS`
 * allowances, never past the bounds' maximum (that many allowances past the read also cap when its
 * change counts as likely): a model that is wrong costs at most that wait. With an allowance of the
 * bounds' maximum itself, no wait can be longer than the allowance, so the reads are as even as the
 * cadence's: the share is what lets the model save reads where a change is unlikely and spend them
 * where it is likely.
 * When the budget is tight, a read whose change is not yet likely when it is due is put back for a
 * turn or two (`ReadTiming.likelyAt`, the need's).
 */
function foreseeRead(foresight: Foresight, executing: readonly string[], now: number, bounds: CadenceBounds, estimateOf: EstimateOf, shareMs?: number): ReadTiming | undefined {
  if (executing.length === 0 || foresight.waitingSince === undefined || !foresight.trusted) return undefined;
  const running: RunningNode[] = [];
  for (const nodeId of executing) {
    const startedAt = foresight.nodes.get(nodeId)?.start?.at;
    const estimate = estimateOf(nodeId);
    // A node past where its estimate could put its end is one the model knows nothing of.
    if (startedAt === undefined || estimate === undefined || (now - startedAt > estimate.medianMs && beyond(estimate, now - startedAt))) return undefined;
    running.push({ startedAt, estimate });
  }
  const allowanceMs = Math.max(1, Math.min(bounds.maxMs, shareMs ?? bounds.maxMs));
  const floorMs = FLOOR_INTERVALS * allowanceMs;
  return timeNextRead({
    now,
    running,
    allowanceMs,
    waitingSince: foresight.waitingSince,
    readsSpent: foresight.readsSpent,
    minMs: bounds.minMs,
    // Never past the run's own bounds: polls are bounded by `pollInterval`.
    maxMs: Math.max(bounds.minMs, Math.min(bounds.maxMs, floorMs)),
    floorMs,
  });
}

/** A duration the run learned of a node. */
interface LearnedDuration {
  readonly nodeId: string;
  readonly durationMs: number;
}

/** Observed brackets count as a duration only when both are this small a share of it. */
const OBSERVED_PRECISION = 0.1;

/**
 * The durations of the nodes that finished, to learn from at the end: the service's own times when
 * the output gave them (service.md §4.2), else the observed ones when both brackets were narrow. Only
 * nodes in `finished`: a failed node's time is not how long its work takes.
 */
export function learnedDurations(foresight: Foresight, outputNodes: readonly OutputNode[], finished: ReadonlySet<string>): LearnedDuration[] {
  const learned = new Map<string, number>();
  for (const node of outputNodes) {
    const durationMs = durationOf(serviceNodeTimes(node));
    if (finished.has(node.nodeId) && durationMs !== undefined) learned.set(node.nodeId, durationMs);
  }
  for (const [nodeId, { start, end }] of foresight.nodes) {
    if (learned.has(nodeId) || !finished.has(nodeId) || start === undefined || end === undefined) continue;
    const durationMs = end.at - start.at;
    if (durationMs > 0 && Math.max(start.widthMs, end.widthMs) <= OBSERVED_PRECISION * durationMs) learned.set(nodeId, durationMs);
  }
  return [...learned].map(([nodeId, durationMs]) => ({ nodeId, durationMs }));
}

/*
 * Where the next read goes: a run's next status read when the nodes it waits on have learned durations.
 *
 * The run waits for its next change: the first end among its running nodes, each a log-normal
 * (duration-model.ts) conditioned on having run so far without ending. Reads are a cost, a late
 * sighting is a loss; spacing reads δ(t) apart costs 1/δ(t) reads per ms while the change is still to
 * come, and a change in a gap waits half of it on average, so the expected loss per ms is
 * f(t)·δ(t)/2 against S(t)/δ(t) reads. Minimising loss + λ × reads gives δ(t) = √(2λ / h(t)), with
 * h = f / S the hazard: reads dense where a change is likely, sparse where it is not. λ is set so that
 * the reads of the whole wait for this change — those already made since the last one, and those
 * expected until it comes — are what the run may spend over that wait (`READ_SHARE` of one per
 * `allowanceMs`, one per its quiet pace): reads saved while a change was unlikely are spent when it is.
 * δ stays within the run's bounds.
 */

/** A running node the model knows: when it started (on the run's scheduler) and its estimate. */
interface RunningNode {
  readonly startedAt: number;
  readonly estimate: DurationEstimate;
}

interface ReadTimingInput {
  /** The time of the read just answered. */
  readonly now: number;
  /** The nodes whose end is the run's next change; at least one. */
  readonly running: readonly RunningNode[];
  /** The run's allowance: on average it may read once per this (its bounds' maximum). */
  readonly allowanceMs: number;
  /** When the run began waiting for this change: the read that saw the last one. */
  readonly waitingSince: number;
  /** Reads made since `waitingSince`, this one included. */
  readonly readsSpent: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** How far past the read's own time its change counts as likely at the latest (`likelyAt`): no read is put back for longer. */
  readonly floorMs: number;
}

/**
 * The wait before the next read, and when its change has become likely: the moment the change has
 * become as likely as one of the run's reads is worth (one in k, for k reads it may spend on this wait;
 * between 1 in 20 and even odds), or the floor past the read, whichever comes first. On a tight budget
 * a read whose change is not yet likely when it is due is put back (`ReadNeed.likelyAt`).
 */
interface ReadTiming {
  readonly waitMs: number;
  /** When the change has become likely: the need's `likelyAt` (not when the read is due). */
  readonly likelyAt: number;
}

/**
 * The share of its allowance a run with a model spends: all of it — the same count as without a
 * model, landing where changes are. (At 0.9 the model saw no sooner than the cadence at cv 0.6 in
 * the simulation of learned-durations.sim.ts, with a tenth fewer reads.)
 */
const READ_SHARE = 1;

/**
 * The longest wait between a run's reads, and how far past a read its change counts as likely at the
 * latest, in allowances (`foreseeRead`): the bound on starvation when the model is wrong (no run waits
 * more than a bounded multiple of its allowance), and so on what a wrong model can cost.
 */
const FLOOR_INTERVALS = 1.5;

/**
 * Bounds of how likely the change must have become to count as likely for the run's read: never
 * before one chance in twenty (a read that early is a read wasted), never later than even odds.
 */
const MIN_LIKELY_CHANCE = 0.05;
const MAX_LIKELY_CHANCE = 0.5;

/** Points of the grid the next change's distribution is laid on. */
const GRID = 256;

/** The grid ends where the change is all but certain to have come. */
const LOG_TAIL = Math.log(1e-3);

/** ln P(no running node has ended by `at` | none had by `now`). */
function logStillRunning(running: readonly RunningNode[], now: number, at: number): number {
  let log = 0;
  for (const node of running) log += logSurvival(node.estimate, at - node.startedAt) - logSurvival(node.estimate, now - node.startedAt);
  return log;
}

/**
 * From `now`, the span within which the next change is all but certain, doubling from a second; never
 * past `LONGEST_NODE_MS`, as no change is further off than a node can run.
 */
function horizonMs(running: readonly RunningNode[], now: number): number {
  let span = 1_000;
  while (span < LONGEST_NODE_MS && logStillRunning(running, now, now + span) > LOG_TAIL) span *= 2;
  return Math.min(span, LONGEST_NODE_MS);
}

const clamp = (value: number, low: number, high: number): number => Math.min(high, Math.max(low, value));

/**
 * When the next read goes (see "Where the next read goes" above for the rule) and when its change has
 * become likely.
 *
 * @example
 * ```ts
 * const { waitMs, likelyAt } = timeNextRead({ now, running: [{ startedAt, estimate }], allowanceMs: 2_000, waitingSince: startedAt, readsSpent: 1, minMs: 500, maxMs: 10_000, floorMs: 6_000 });
 * ```
 */
export function timeNextRead(input: ReadTimingInput): ReadTiming {
  const { now, running } = input;
  const span = horizonMs(running, now);
  const step = span / GRID;
  // still[k]: P(no change by now + k·step | none by now); weight[k]: the time in bin k while the change is still to come.
  const still = Array.from({ length: GRID + 1 }, (_, k) => Math.exp(logStillRunning(running, now, now + k * step)));
  const weight = still.slice(0, GRID).map((here, k) => ((here + (still[k + 1] ?? 0)) / 2) * step);
  const expectedWait = weight.reduce((sum, w) => sum + w, 0);
  // The reads the run may spend on this wait for the change (those made since it began count).
  const reads = (READ_SHARE * (now - input.waitingSince + expectedWait)) / input.allowanceMs;
  const waitMs = spacedWait(input, still, weight, Math.max(1, reads - input.readsSpent), step);

  // Likely once the change is likely enough to be worth one of those reads: 1 in k for k reads, so
  // that the reads a tight budget gives the run land where each has a fair chance, not all at the
  // median.
  const threshold = clamp(1 / reads, MIN_LIKELY_CHANCE, MAX_LIKELY_CHANCE);
  let likelyAt = now + span;
  for (let k = 0; k < GRID; k += 1) {
    const here = still[k] ?? 1;
    const next = still[k + 1] ?? 0;
    if (1 - next >= threshold) {
      likelyAt = now + k * step + (here > next ? ((here - (1 - threshold)) / (here - next)) * step : 0);
      break;
    }
  }
  return { waitMs, likelyAt: Math.round(Math.min(likelyAt, now + waitMs + input.floorMs)) };
}

/** The wait that spends the run's allowance where the change is likely ("Where the next read goes" above). */
function spacedWait(input: ReadTimingInput, still: readonly number[], weight: readonly number[], target: number, step: number): number {
  const { now, minMs, maxMs } = input;
  // hazard[k]: the rate of change in bin k.
  const hazard = still.slice(0, GRID).map((here, k) => (here > 0 ? Math.max(0, here - (still[k + 1] ?? 0)) / (here * step) : Number.POSITIVE_INFINITY));
  const gap = (lambda: number, k: number): number => {
    const rate = hazard[k] ?? 0;
    return rate > 0 ? clamp(Math.sqrt((2 * lambda) / rate), minMs, maxMs) : maxMs;
  };
  const expectedReads = (lambda: number): number => weight.reduce((sum, w, k) => sum + w / gap(lambda, k), 0);

  // Reads fall as λ grows: bisect ln λ for the target.
  let low = -10;
  let high = 40;
  for (let i = 0; i < 48; i += 1) {
    const middle = (low + high) / 2;
    if (expectedReads(Math.exp(middle)) > target) low = middle;
    else high = middle;
  }
  const lambda = Math.exp(high);

  // The next read comes when the read density ∫ dt / δ(t) reaches one.
  let density = 0;
  let nextAt = now + maxMs;
  for (let k = 0; k < GRID; k += 1) {
    const inBin = step / gap(lambda, k);
    if (density + inBin >= 1) {
      nextAt = now + k * step + ((1 - density) / inBin) * step;
      break;
    }
    density += inBin;
  }
  return Math.floor(clamp(nextAt - now, minMs, maxMs));
}

/*
 * The little of the log-normal distribution that read timing needs: how likely a node that has run
 * `elapsedMs` is still running, on a log scale so that a node far past its expected end (a survival
 * of 1e-30) still compares with another.
 */

/**
 * ln(erfc(x)) for x ≥ 0, from the Chebyshev fit of Numerical Recipes' `erfcc` (relative error under
 * 1.2e-7 everywhere), written in its log form so that it holds far into the tail.
 */
function logErfc(x: number): number {
  const t = 1 / (1 + 0.5 * x);
  const poly =
    -1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return Math.log(t) - x * x + poly;
}

/** ln P(Z > z) for a standard normal Z. */
function logNormalTail(z: number): number {
  if (z >= 0) return logErfc(z / Math.SQRT2) - Math.LN2;
  // P(Z > z) = 1 − P(Z > −z), and P(Z > −z) ≤ ½ here, so the subtraction loses nothing.
  return Math.log1p(-Math.exp(logErfc(-z / Math.SQRT2) - Math.LN2));
}

/** ln P(duration > elapsedMs) for a node with this estimate; 0 (certain) before it could have ended. */
function logSurvival(estimate: DurationEstimate, elapsedMs: number): number {
  if (elapsedMs <= 0) return 0;
  return logNormalTail((Math.log(elapsedMs) - Math.log(estimate.medianMs)) / estimate.logSigma);
}

// --- the poll's shell ----------------------------------------------------------------------------
/** One read's events, in order, and the task nodes (service.md §4.2) once an output read listed them. */
export interface PollRead {
  readonly events: readonly RunEvent[];
  readonly tasks?: readonly OutputNode[];
}

/** The execution a poll follows. */
interface PollTarget {
  readonly executionId: string;
  readonly canvasId: string | undefined;
  /**
   * The status the start answered. Without one (a `watch`), the first status read is announced as
   * the `started` event.
   */
  readonly startedStatus: ExecutionStatus | undefined;
}

/** How a run polls: these settings of the run (`RunSettings`), filled in. */
export interface PollSettings {
  readonly bounds: CadenceBounds;
  readonly output: OutputMode;
  readonly scheduler: SchedulerLike;
  readonly random: () => number;
  /** Learned node durations: reads are timed by them, and the run's durations recorded at its end. */
  readonly durations: DurationModel | undefined;
  /**
   * Where the request budget times the run's reads (`AccountBudget.needRead`): the run registers each read's
   * need there and asks at once, and the budget holds the read until its turn. Without it the run
   * waits until the need is due (`readDueAt`, the same rule) and then reads.
   */
  readonly needRead: ((executionId: string, need: ReadNeed) => () => void) | undefined;
  readonly logger: Logger | undefined;
  readonly onFailedBranches: FailedBranches;
  /** How long an outage is read through (`RunOptions.outageMs`); 0: the first failed read errors. */
  readonly outageMs: number;
}

/**
 * A run's way to tell its poll to read now: the poll listens while it lasts. It cuts the wait before
 * the next read short with a status read: after an abort, the end is read at once (through an outage,
 * the failed read is made again at once). From then on the run's reads are urgent
 * (`ReadOptions.urgent`), ahead of other runs' in the request budget, and a read still waiting in it
 * is asked again as urgent: someone waits on the abort's confirmation. A plain callback, not a
 * `Subject`: every watched run holds one, and most never use it.
 */
export class ReadNow {
  #listener: (() => void) | undefined;

  /** The poll's listener, or `undefined` once the poll is over. */
  listen(listener: (() => void) | undefined): void {
    this.#listener = listener;
  }

  /** Tells the poll, if one listens. */
  readNow(): void {
    this.#listener?.();
  }
}

/**
 * Follows one execution until it is terminal: the shell of `reducePoll` (above, where the
 * rules are). It waits on `scheduler`, makes the reads the plan asks for and feeds their answers back,
 * with the time and a jitter draw. A read that fails for an outage (below) is made again with
 * backoff, each time through the source (so through the request budget), for up to `outageMs`; each
 * failure and the first success after them are told as `connection` events. Other errors of the source,
 * and the last one of an outage too long, pass through; the caller decides what they mean. It emits
 * one `PollRead` per read that changed something, and one per `connection` event.
 */
export function pollExecution(source: ExecutionSource, target: PollTarget, settings: PollSettings, readNow?: ReadNow): Observable<PollRead> {
  const { executionId, canvasId } = target;
  const { scheduler, durations } = settings;
  // Learned durations: estimates of this run's workflow; a watch that does not know its canvas has none.
  const estimateOf = canvasId === undefined || durations === undefined ? undefined : (nodeId: string) => durations.estimate(canvasId, nodeId);
  return new Observable<PollRead>((subscriber) => {
    // The one timer, or the one read, the plan is waiting on.
    let pending: Subscription | undefined;
    // The outage the reads are going through, if they are failing, and the wait before the next attempt.
    let outage: Outage | undefined;
    let again: Subscription | undefined;
    // Makes that next attempt at once (an abort answered: the service is back).
    let retryNow: (() => void) | undefined;
    // The read the plan waits on, to ask again (urgent) when an abort answered while it waited.
    let inFlight: (() => void) | undefined;
    // The abort answered: someone waits on its confirmation (see `ReadNow`).
    let urgent = false;
    // Withdraws the need registered with the budget for the next read, should that read not ask.
    let withdrawNeed: (() => void) | undefined;
    const connection = (reconnecting: ConnectionEvent['reconnecting']): void => {
      subscriber.next({ events: [{ type: 'connection', executionId, ...(reconnecting === undefined ? {} : { reconnecting }) }] });
    };
    const answer = <T>(read: () => Observable<T>, input: (value: T, at: number, random: number) => PollInput): Subscription => {
      inFlight = () => {
        pending?.unsubscribe();
        pending = answer(read, input);
      };
      // The answer taken in by `next` itself, not a `map`: an Observable and a subscriber fewer per read.
      return read().subscribe({
        next: (value) => {
          const event = input(value, scheduler.now(), settings.random());
          inFlight = undefined;
          if (outage !== undefined) {
            outage = undefined;
            connection(undefined);
          }
          dispatch(event);
        },
        error: (error: unknown) => {
          inFlight = undefined;
          const now = scheduler.now();
          const step = afterFailure(outage, error, now, settings.random(), settings.outageMs);
          if (step.kind === 'give-up') {
            subscriber.error(outlasted(error, step.outage, now));
            return;
          }
          outage = step.outage;
          connection({ attempts: outage.attempts, failingForMs: now - outage.since, error: outage.error });
          // The subscriber may have left on that event.
          if (subscriber.closed) return;
          // The same read again, after the wait: the plan still waits on its answer. Kept apart from
          // `pending`, which a read that failed at once is about to be assigned.
          const retry = (): void => {
            again?.unsubscribe();
            again = undefined;
            pending = answer(read, input);
          };
          again = scheduler.schedule(retry, step.delayMs);
          retryNow = retry;
        },
      });
    };

    // Read when the read is made, so that one asked again after the abort goes as urgent.
    const readOptions = (): ReadOptions | undefined => (urgent ? { urgent } : undefined);
    const perform = (command: PollCommand): void => {
      // Whatever the plan asked before it heard the subscriber leave is not begun.
      if (subscriber.closed) return;
      switch (command.type) {
        case 'wait': {
          pending?.unsubscribe();
          const dueAt = readDueAt(command.need, undefined);
          if (settings.needRead !== undefined) {
            // The budget holds the read until its turn: it asks now. The plan chooses the read for
            // the moment it wished it (an output read alone is spaced by then).
            withdrawNeed?.();
            withdrawNeed = settings.needRead(executionId, command.need);
            dispatch({ type: 'wake', at: Math.max(scheduler.now(), dueAt) });
            return;
          }
          // The scheduler's own action, not `timer()`: no Observable and subscriber made per wait.
          pending = scheduler.schedule(() => {
            dispatch({ type: 'wake', at: scheduler.now() });
          }, Math.max(0, dueAt - scheduler.now()));
          return;
        }
        case 'read':
          pending?.unsubscribe();
          if (command.need !== undefined && settings.needRead !== undefined) {
            withdrawNeed?.();
            withdrawNeed = settings.needRead(executionId, command.need);
          }
          pending =
            command.endpoint === 'status'
              ? answer(
                  () => source.status(executionId, readOptions()),
                  (snapshot, at, random) => ({ type: 'status', snapshot, at, random }),
                )
              : answer(
                  () => source.output(executionId, readOptions()),
                  (output, at, random) => ({ type: 'output', output, at, random }),
                );
          return;
        case 'emit':
          subscriber.next(command.view.outputNodes.length === 0 ? { events: command.events } : { events: command.events, tasks: command.view.outputNodes });
          return;
        case 'warn':
          settings.logger?.warn(command.warning.message, command.warning.meta);
          return;
        case 'learn':
          for (const { nodeId, durationMs } of command.durations) if (canvasId !== undefined) settings.durations?.record(canvasId, nodeId, durationMs);
          return;
        case 'end':
          subscriber.complete();
          return;
        default:
          command satisfies never;
      }
    };
    const rules = { executionId, canvasId, bounds: settings.bounds, output: settings.output, onFailedBranches: settings.onFailedBranches, estimateOf };
    const dispatch = reducerShell(reducePoll, initialPoll(rules, target.startedStatus), perform);
    dispatch({ type: 'begin', at: scheduler.now() });
    readNow?.listen(() => {
      urgent = true;
      if (again !== undefined && !again.closed) retryNow?.();
      // A read waiting (in the request budget, likely behind other runs' reads): the same read, asked
      // again as urgent; it was asked before the abort, so its answer could not confirm it anyway.
      else {
        inFlight?.();
        dispatch({ type: 'poke' });
      }
    });
    return () => {
      readNow?.listen(undefined);
      pending?.unsubscribe();
      again?.unsubscribe();
      withdrawNeed?.();
    };
  });
}

// --- through an outage ---------------------------------------------------------------------------
/*
 * How a run follows its execution through an outage of the service or of the request budget: which
 * failures are an outage, how long it reads again and how often, and when it gives up. Pure: the
 * shells (`pollExecution` for reads, run-lifecycle.ts for a start and a background abort) wait and call.
 */

/** An outage a run is reading through: since when, on the run's scheduler, and how many reads failed. */
export interface Outage {
  /** When the outage's first read failed. */
  readonly since: number;
  /** Reads (or aborts) failed in it so far, the first included. */
  readonly attempts: number;
  /** The last failure, in short (`outageOf`). */
  readonly error: string;
}

/** Try again after `delayMs`, or give up: the failure is no outage, or the outage outlasted `outageMs`. */
type OutageStep = { readonly kind: 'retry'; readonly outage: Outage; readonly delayMs: number } | { readonly kind: 'give-up'; readonly outage: Outage | undefined };

/** The first wait after a failed read; each next one doubles, up to `OUTAGE_MAX_DELAY_MS`. */
const OUTAGE_BASE_DELAY_MS = 1_000;
/**
 * The longest wait between two reads of an outage: a run notices the service is back within half a
 * minute, and a fleet of runs reading through an outage stays far below the budget's pace.
 */
export const OUTAGE_MAX_DELAY_MS = 30_000;

/** A budget that cannot reach its shared store (a Redis budget past `unavailableAfterMs`): nothing was sent. */
const BUDGET_UNAVAILABLE = 'BUDGET_UNAVAILABLE';

/**
 * A failure as an outage the run waits out, in short — as its state shows it while reconnecting, and
 * never the API key (only the kind and the status) — or `undefined` when it is none. An outage: no
 * answer (the connection refused or dropped, a timeout), the service failing (5xx, `E0000`, service.md
 * §1.2), an answer cut off (not JSON), or the request budget unable to reach its store. Anything else
 * (401, 403, 404, a schema mismatch, a spent day) fails the same way again: the run errors at once.
 */
function outageOf(error: unknown): string | undefined {
  if (isServerError(error)) return error.status === 200 ? `service error ${error.errCode ?? ''}`.trim() : `HTTP ${error.status}`;
  if (isTimeoutError(error)) return 'timed out';
  if (isNetworkError(error)) return 'network error';
  if (isResponseValidationError(error)) return error.reason === 'not-json' ? 'answer cut off' : undefined;
  return isBudgetUnavailable(error) ? 'request budget unavailable' : undefined;
}

/** Whether a failed read is an outage the run waits out (see `outageOf`). */
export function isOutage(error: unknown): boolean {
  return outageOf(error) !== undefined;
}

/** The request budget could not reach its shared store: the request was never sent. */
export function isBudgetUnavailable(error: unknown): boolean {
  return isFlowstreamError(error) && error.code === BUDGET_UNAVAILABLE;
}

/**
 * Exponential backoff with equal jitter (half fixed, half random) from `OUTAGE_BASE_DELAY_MS` to
 * `OUTAGE_MAX_DELAY_MS`: the wait after the `attempts`-th failure in a row (1 for the first).
 */
export function outageBackoff(attempts: number, random: number): number {
  const step = Math.min(OUTAGE_MAX_DELAY_MS, OUTAGE_BASE_DELAY_MS * 2 ** Math.min(attempts - 1, 30));
  return Math.round(step / 2 + (random * step) / 2);
}

/**
 * What to do after a read failed with `error` at `now`: an outage is read through with backoff until
 * `outageMs` after its first failure — the last wait is cut to end at that moment, so the last read is
 * made then — and a failure after it gives up. A failure that is no outage gives up at once.
 */
export function afterFailure(outage: Outage | undefined, error: unknown, now: number, random: number, outageMs: number): OutageStep {
  const described = outageOf(error);
  if (described === undefined) return { kind: 'give-up', outage };
  const next: Outage = { since: outage?.since ?? now, attempts: (outage?.attempts ?? 0) + 1, error: described };
  const left = next.since + outageMs - now;
  if (left <= 0) return { kind: 'give-up', outage: next };
  return { kind: 'retry', outage: next, delayMs: Math.min(outageBackoff(next.attempts, random), left) };
}

/**
 * The error a run ends with after reading through an outage for too long: the last failure, keeping
 * its class (a `NetworkError` stays one), its message saying how long the run tried. Without an
 * outage (a failure that is none), the error as it is.
 */
export function outlasted(error: unknown, outage: Outage | undefined, now: number): unknown {
  if (outage === undefined || !(error instanceof Error) || !Object.isExtensible(error)) return error;
  const seconds = Math.round((now - outage.since) / 1_000);
  error.message = `${error.message} (tried again through the outage for ${seconds} s, ${outage.attempts} failed attempts, then gave up)`;
  return error;
}
