import type { ReadNeed } from '../domain/budget.js';
import type { ExecutionOutput, ExecutionSnapshot, ExecutionStatus, NodeStatus } from '../domain/model.js';
import { DEFAULTS, type PollInterval } from '../domain/options.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { timerDelay } from '../http/options.js';
import type { RunEvent } from './events.js';
import { announceHeldFiles, diffNodeStatuses, diffOutput, diffStatus, type DiffWarning, type ExecutionView, initialView, isExecutionOver, isNodeDone, runResultOf, type ViewDiff } from './execution-view.js';
import { countRead, type EstimateOf, foreseeRead, learnedDurations, type LearnedDuration, NO_FORESIGHT, observeTransitions, type Foresight } from './foresight.js';
import type { Step } from './run-machine.js';
import type { FailedBranches } from './run-lifecycle.js';

export interface PollRules {
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
  /** The node events of the read, for the node times (foresight.ts). */
  readonly transitions: readonly RunEvent[];
  /** The execution is over: this read's output, if any, is the run's last. */
  readonly terminal?: boolean;
}

/** What the poll is doing: at most one read at a time, and no wait while one is on its way. */
export type PollActivity =
  | { readonly kind: 'idle' }
  | { readonly kind: 'waiting' }
  | { readonly kind: 'status' }
  /** The output read that completes a status read, whose view and facts it carries. */
  | { readonly kind: 'output-after-status'; readonly view: ExecutionView; readonly facts: ReadFacts }
  | { readonly kind: 'output-alone' }
  | { readonly kind: 'ended' };

export interface PollPlan {
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
  /** Node times seen, and the wait for the next change (foresight.ts). */
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

export type PollStep = Step<PollPlan, PollCommand>;

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
      return readOutputAlone(plan, input.at) ? reading(plan, 'output-alone') : reading(plan, 'status');
    case 'poke':
      if (activity.kind === 'waiting') return reading(plan, 'status');
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

function reading(plan: PollPlan, what: 'status' | 'output-alone'): PollStep {
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
  const terminal = isExecutionOver(status.view.status);
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

/** The output alone, its task nodes standing in for the status read (see `shouldReadOutputAlone`). */
function outputAloneAnswered(plan: PollPlan, output: ExecutionOutput, now: number, random: number): PollStep {
  const moved = diffNodeStatuses(plan.view, output.output);
  const text = diffOutput(moved.view, output);
  const diff: ViewDiff = { view: text.view, events: [...moved.events, ...text.events], warnings: [...moved.warnings, ...text.warnings] };
  return conclude(plan, diff, { now, changed: moved.events.length > 0, output: true, nodeEnded: false, transitions: moved.events }, random);
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
  // service.md §3.3: a failed execution's other branches may still run; `follow` reads on until they end.
  const branchesRunning = view.status === 'failed' && nodes.some((node) => node.status === 'executing' || node.status === 'waiting');
  const estimateOf = rules.estimateOf ?? (() => undefined);
  const foresight = countRead(observeTransitions(plan.foresight, facts.transitions, plan.lastReadAt, facts.now, estimateOf), facts.changed, facts.now);
  if (isExecutionOver(view.status) && !(rules.onFailedBranches === 'follow' && branchesRunning)) {
    const last = announceHeldFiles(view);
    const finished: RunEvent = { type: 'finished', executionId: rules.executionId, result: runResultOf(last.view, view.status, rules.canvasId) };
    const durations = rules.estimateOf === undefined ? [] : learnedDurations(foresight, view.outputNodes, finishedNodes(view));
    const learn: PollCommand[] = durations.length === 0 ? [] : [{ type: 'learn', durations }];
    return { state: { ...plan, view: last.view, activity: { kind: 'ended' }, foresight }, commands: [...warnings(diff), ...emit([...diff.events, ...last.events, finished], last.view), ...learn, { type: 'end' }] };
  }
  // service.md §3.3: every node done while the execution still says `executing` means the next server
  // tick ends it; read again soon rather than declare the end ourselves.
  const allDone = nodes.length > 0 && nodes.every((node) => isNodeDone(node.status));
  const settlingSince = allDone ? (plan.settlingSince ?? facts.now) : undefined;
  const settling = settlingSince !== undefined && facts.now - settlingSince < SETTLING_WINDOW_MS;
  const pace: Reading = facts.changed ? 'changed' : settling ? 'settling' : 'quiet';
  const cadence = nextCadence(rules.bounds, plan.cadence, pace, () => random);
  // A change certain within a tick — the end (service.md §3.3), or, when a node ended and nothing runs,
  // a child's start (§3.2) — is one the model need not time: its read is certain to be worth it, and
  // goes at once on a tight budget too. While other nodes run, a node's end starts nothing for sure
  // (the status lists no edges, §4.1): those reads come at the cadence's fast pace, in their turn.
  const executing = executingNodes(view);
  const certain = allDone || (executing.length === 0 && awaitsStart(facts.transitions));
  const foreseen = certain ? undefined : foreseeRead(foresight, executing, facts.now, rules.bounds, estimateOf);
  const need: ReadNeed = {
    since: facts.now,
    minMs: rules.bounds.minMs,
    wishMs: foreseen?.waitMs ?? cadence.waitMs,
    maxMs: Math.max(rules.bounds.minMs, rules.bounds.maxMs),
    // The model's timing for a shorter share of the account, should the budget give the run one.
    ...(foreseen === undefined ? {} : { likelyAt: foreseen.dueAt, atShare: (shareMs: number) => foreseeRead(foresight, executing, facts.now, rules.bounds, estimateOf, shareMs) ?? foreseen }),
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
  const then: PollStep = plan.poked ? reading(next, 'status') : { state: next, commands: [{ type: 'wait', need }] };
  return { state: then.state, commands: [...warnings(diff), ...emit(diff.events, view), ...then.commands] };
}

function executingNodes(view: ExecutionView): string[] {
  return [...view.nodes.values()].filter((node) => node.status === 'executing').map((node) => node.nodeId);
}

function finishedNodes(view: ExecutionView): Set<string> {
  return new Set([...view.nodes.values()].filter((node) => node.status === 'finish').map((node) => node.nodeId));
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

export const OUTPUT_MODES: readonly unknown[] = ['stream', 'final'] satisfies readonly OutputMode[];

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
 * number of ms a timer keeps (see `timerDelay`), and a `minMs` above the `maxMs` given beside it is a mistake (`InvalidArgumentError`,
 * named after `name`); a `maxMs` that comes from a default and is below `minMs` is raised to it.
 */
export function cadenceBounds(interval: PollInterval = {}, defaults: PollInterval = {}, name = 'pollInterval'): CadenceBounds {
  checkInterval(defaults, 'polling');
  checkInterval(interval, name);
  const minMs = interval.minMs ?? defaults.minMs ?? DEFAULT_POLL_INTERVAL.minMs;
  const maxMs = Math.max(minMs, interval.maxMs ?? defaults.maxMs ?? DEFAULT_POLL_INTERVAL.maxMs);
  return { minMs, maxMs };
}

function checkInterval(interval: PollInterval, name: string): void {
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
 * What the last read showed: `changed` (the execution or a node changed status), `settling` (every node is done but the
 * execution has not turned terminal yet, service.md §3.3: the next tick will say `finish`), or `quiet`.
 */
export type Reading = 'changed' | 'settling' | 'quiet';

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
  reading: Reading,
  random: () => number,
): { readonly waitMs: number; readonly state: CadenceState } {
  const delayMs = reading === 'quiet' ? Math.min(bounds.maxMs, state.delayMs * BACKOFF_FACTOR) : bounds.minMs;
  const spread = delayMs * (1 + JITTER * (2 * random() - 1));
  const waitMs = Math.round(Math.min(bounds.maxMs, Math.max(bounds.minMs, spread)));
  return { waitMs, state: { delayMs } };
}
