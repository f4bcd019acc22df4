import type { ExecutionStatus, RunResult, StartedExecution } from '../domain/model.js';
import { RunTimeoutError, WorkflowFailedError } from '../errors/run-errors.js';
import { startedNothing } from '../http/transport.js';
import type { FinishedEvent, RunEvent } from './events.js';
import type { PollRead, Step } from './poll.js';
import { isExecutionOver } from './execution-view.js';
import { type RunStop, stoppedEnding, unstartedResult } from './run-state.js';
import type { FailedBranches } from './run-lifecycle.js';

/**
 * What a run handle asks of its run while it lasts. `cancel` and `timeout` abort the execution (or
 * drop a start not sent yet) and go on following it to its end, so that the last `finished` says how
 * it ended (`endedBy: 'aborted' | 'timeout'`); `detach` stops following and leaves the execution
 * running, once the start has answered.
 */
export type RunControl = 'cancel' | 'timeout' | 'detach';

/** The rules of one run: where its execution comes from, and its settings that decide how it ends. */
export interface RunRules {
  readonly origin: { readonly kind: 'start'; readonly canvasId: string } | { readonly kind: 'watch'; readonly executionId: string; readonly canvasId?: string | undefined };
  readonly abortOnUnsubscribe: boolean;
  readonly failOnWorkflowError: boolean;
  readonly onFailedBranches: FailedBranches;
  readonly timeoutMs: number | undefined;
}

/** What happens to a run: its subscriber, its start's progress, its handle, its clock, its poll, its abort. */
export type LifecycleEvent =
  | { readonly type: 'subscribe' }
  | { readonly type: 'sending'; readonly sending: boolean }
  | { readonly type: 'started'; readonly execution: StartedExecution }
  | { readonly type: 'start-failed'; readonly error: unknown }
  | { readonly type: 'control'; readonly control: RunControl }
  | { readonly type: 'signal'; readonly reason: unknown }
  | { readonly type: 'deadline' }
  | { readonly type: 'unsubscribe' }
  | { readonly type: 'poll-read'; readonly read: PollRead }
  | { readonly type: 'poll-error'; readonly error: unknown }
  | { readonly type: 'poll-complete' }
  /** `finished` is about to reach the subscriber: the events before it did. */
  | { readonly type: 'finished-delivered' }
  | { readonly type: 'abort-answered' };

/**
 * What the run asks its shell to do. `drop-start` unsubscribes the start: the call is cancelled, and
 * while nothing of it is on its way no execution exists. `abort` is sent in the background, outside
 * the subscription; `read-now` cuts the poll's wait short. `start-in-doubt`: a start let through after
 * its run was left failed without an answer (its request timeout passed, its connection was lost): an
 * execution may have started that nothing aborts, which the shell reports as a warning.
 */
export type LifecycleCommand =
  | { readonly type: 'start' }
  | { readonly type: 'drop-start' }
  | { readonly type: 'follow'; readonly executionId: string; readonly canvasId: string | undefined; readonly startedStatus: ExecutionStatus | undefined }
  | { readonly type: 'stop-following' }
  | { readonly type: 'abort'; readonly executionId: string }
  | { readonly type: 'start-in-doubt'; readonly error: unknown }
  | { readonly type: 'read-now' }
  /** The events of one reading, and the task nodes an output read listed (`PollRead.tasks`). */
  | { readonly type: 'emit'; readonly events: readonly RunEvent[]; readonly tasks?: PollRead['tasks'] }
  | { readonly type: 'complete' }
  | { readonly type: 'error'; readonly error: unknown; readonly executionId?: string };

/**
 * Where the run is. `starting`: the start is subscribed, `sending` while a request of it is on its way
 * (the execution may exist from then on). `ending`: the reading with `finished` is being delivered; a
 * subscriber that leaves before `finished` reached it leaves a run not over. `finishing`: `finished` was delivered, the poll is about to
 * complete. `leaving`: the subscriber is gone (or was sent an error) while the start was on its way;
 * the start is kept only to abort its execution once the id arrives.
 */
export type RunPhase =
  | { readonly name: 'idle' }
  | { readonly name: 'starting'; readonly sending: boolean; readonly detaching: boolean }
  | { readonly name: 'following'; readonly executionId: string }
  | { readonly name: 'ending'; readonly executionId: string; readonly result: RunResult }
  | { readonly name: 'finishing'; readonly executionId: string; readonly result: RunResult }
  | { readonly name: 'leaving' }
  | { readonly name: 'closed' };

export interface RunMachine {
  readonly rules: RunRules;
  readonly phase: RunPhase;
  /** A status of the execution said `finish` or `failed`. */
  readonly seenEnd: boolean;
  readonly stop: RunStop | undefined;
  readonly abortSent: boolean;
}

export type RunStep = Step<RunMachine, LifecycleCommand>;

export function initialRun(rules: RunRules): RunMachine {
  return { rules, phase: { name: 'idle' }, seenEnd: false, stop: undefined, abortSent: false };
}

/**
 * The life of one subscription to a run, as a pure reducer; these are the rules of how a run
 * ends. `finished`/finish completes; `finished`/failed errors with `WorkflowFailedError` unless
 * `failOnWorkflowError` is false; a failed request errors carrying the `executionId` and leaves the
 * execution alone. Leaving early (unsubscribe, `signal`, `timeoutMs`) aborts the execution once, in the
 * background; while the start is on its way it is let through (the execution may exist) and aborted
 * once its id arrives, with nothing more emitted (its answer lost instead, the start is in doubt: reported,
 * since an execution may run that nothing aborts). A start not sent yet (waiting in the request budget,
 * or to be sent again) is dropped instead: nothing to abort.
 */
export function reduceRun(machine: RunMachine, event: LifecycleEvent): RunStep {
  const { rules } = machine;
  switch (event.type) {
    case 'subscribe':
      if (machine.phase.name !== 'idle') return stay(machine);
      if (rules.origin.kind === 'watch') return to(machine, following(rules.origin.executionId), follow(rules, rules.origin.executionId, undefined));
      return to(machine, { name: 'starting', sending: false, detaching: false }, { type: 'start' });
    case 'sending':
      return sendingChanged(machine, event.sending);
    case 'started':
      return startAnswered(machine, event.execution);
    case 'start-failed':
      if (machine.phase.name === 'starting') return to(machine, CLOSED, { type: 'error', error: event.error });
      if (machine.phase.name !== 'leaving') return stay(machine);
      // Left while the start was on its way, and its answer is lost: the execution may exist, with no id to abort it by.
      return startedNothing(event.error) ? to(machine, CLOSED) : to(machine, CLOSED, { type: 'start-in-doubt', error: event.error });
    case 'control':
      return steered(machine, event.control);
    case 'signal':
      return left(machine, rules.abortOnUnsubscribe, { type: 'error', error: event.reason });
    case 'deadline':
      // A deadline always aborts: the run is over for its caller, and the execution would spend on.
      if (rules.timeoutMs === undefined) return stay(machine);
      return left(machine, true, { type: 'error', error: new RunTimeoutError(rules.timeoutMs, executionIdOf(machine.phase)) });
    case 'unsubscribe':
      return left(machine, rules.abortOnUnsubscribe, undefined);
    case 'poll-read':
      return polled(machine, event.read);
    case 'poll-error': {
      const executionId = executionIdOf(machine.phase);
      if (executionId === undefined) return stay(machine);
      return to(machine, CLOSED, { type: 'error', error: event.error, executionId });
    }
    case 'poll-complete':
      return pollCompleted(machine);
    case 'finished-delivered':
      return machine.phase.name === 'ending' ? to(machine, { ...machine.phase, name: 'finishing' }) : stay(machine);
    case 'abort-answered':
      // The abort has taken effect (service.md §3.5): read the end now rather than at the cadence's pace.
      return machine.phase.name === 'following' ? { state: machine, commands: [{ type: 'read-now' }] } : stay(machine);
    default:
      return event satisfies never;
  }
}

const CLOSED: RunPhase = { name: 'closed' };

function following(executionId: string): RunPhase {
  return { name: 'following', executionId };
}

function stay(machine: RunMachine): RunStep {
  return { state: machine, commands: [] };
}

function to(machine: RunMachine, phase: RunPhase, ...commands: LifecycleCommand[]): RunStep {
  const abortSent = machine.abortSent || commands.some((command) => command.type === 'abort');
  return { state: { ...machine, phase, abortSent }, commands };
}

function follow(rules: RunRules, executionId: string, startedStatus: ExecutionStatus | undefined): LifecycleCommand {
  return { type: 'follow', executionId, canvasId: canvasIdOf(rules), startedStatus };
}

function canvasIdOf(rules: RunRules): string | undefined {
  return rules.origin.canvasId;
}

function executionIdOf(phase: RunPhase): string | undefined {
  return phase.name === 'following' || phase.name === 'ending' || phase.name === 'finishing' ? phase.executionId : undefined;
}

/** The abort of `executionId`, unless one was sent already: one execution, one abort. */
function abortOnce(machine: RunMachine, executionId: string): LifecycleCommand[] {
  return machine.abortSent ? [] : [{ type: 'abort', executionId }];
}

/** A start stopped while nothing of it was on its way: dropped, and the run ends with no execution. */
function unstarted(machine: RunMachine, stop: RunStop): RunStep {
  const result = unstartedResult(canvasIdOf(machine.rules) ?? '', stop.by);
  return to({ ...machine, stop }, CLOSED, { type: 'drop-start' }, { type: 'emit', events: [{ type: 'finished', executionId: '', result }] }, { type: 'complete' });
}

function sendingChanged(machine: RunMachine, sending: boolean): RunStep {
  const { phase } = machine;
  if (phase.name === 'starting') {
    // `StartOptions.onSending`: the attempt failed and nothing is on its way; a stop asked meanwhile ends the run here.
    if (!sending && machine.stop !== undefined) return unstarted(machine, machine.stop);
    return to(machine, { ...phase, sending });
  }
  if (phase.name === 'leaving' && !sending) return to(machine, CLOSED, { type: 'drop-start' });
  return stay(machine);
}

function startAnswered(machine: RunMachine, execution: StartedExecution): RunStep {
  const { phase } = machine;
  const { executionId, status } = execution;
  if (phase.name === 'leaving') return to(machine, CLOSED, { type: 'abort', executionId });
  if (phase.name !== 'starting') return stay(machine);
  const canvasId = canvasIdOf(machine.rules);
  const aborting: LifecycleCommand[] = machine.stop === undefined ? [] : [{ type: 'abort', executionId }];
  const started: LifecycleCommand = { type: 'emit', events: [{ type: 'started', executionId, ...(canvasId === undefined ? {} : { canvasId }), status }] };
  const next = { ...machine, seenEnd: machine.seenEnd || isExecutionOver(status) };
  // Detached while the start was on its way: the execution runs on, and the run ends with its id.
  if (phase.detaching) return to(next, CLOSED, ...aborting, started, { type: 'complete' });
  return to(next, following(executionId), ...aborting, started, follow(machine.rules, executionId, status));
}

/**
 * The subscriber leaves, or is made to leave by `error` (its signal, its deadline), before the run
 * ended on its own. `abortWanted`: the execution is to be aborted, now or once its id arrives.
 */
function left(machine: RunMachine, abortWanted: boolean, error: LifecycleCommand | undefined): RunStep {
  const { phase } = machine;
  const failing = error === undefined ? [] : [error];
  switch (phase.name) {
    case 'idle':
      // A signal aborted before the run began: nothing is started.
      return to(machine, CLOSED, ...failing);
    case 'starting':
      // A stop asked earlier wants the abort too. Only a start on its way may have made an execution (service.md §2.2, §3.1).
      if ((abortWanted || machine.stop !== undefined) && phase.sending) return to(machine, { name: 'leaving' }, ...failing);
      return to(machine, CLOSED, { type: 'drop-start' }, ...failing);
    case 'following':
    case 'ending':
      return to(machine, CLOSED, ...(abortWanted ? abortOnce(machine, phase.executionId) : []), { type: 'stop-following' }, ...failing);
    case 'finishing':
      // `finished` was delivered: the run ended on its own, nothing to abort, no other ending.
      return error === undefined ? to(machine, CLOSED, { type: 'stop-following' }) : stay(machine);
    case 'leaving':
    case 'closed':
      return stay(machine);
    default:
      return phase satisfies never;
  }
}

function steered(machine: RunMachine, control: RunControl): RunStep {
  const { phase } = machine;
  if (phase.name !== 'starting' && phase.name !== 'following') return stay(machine);
  if (phase.name === 'starting' && phase.detaching) return stay(machine);
  if (control === 'detach') {
    // A start on its way goes through (the execution keeps running) and the run ends with its id.
    if (phase.name === 'starting') return to(machine, { ...phase, detaching: true });
    return to(machine, CLOSED, { type: 'stop-following' }, { type: 'complete' });
  }
  if (machine.stop !== undefined) return stay(machine);
  const stop: RunStop = { by: control === 'cancel' ? 'aborted' : 'timeout', afterEnd: machine.seenEnd };
  if (phase.name === 'starting') return phase.sending ? to({ ...machine, stop }, phase) : unstarted(machine, stop);
  return to({ ...machine, stop }, phase, ...abortOnce(machine, phase.executionId));
}

/** A read's events go out as one reading; its `finished` says how this client saw the end. */
function polled(machine: RunMachine, read: PollRead): RunStep {
  const { phase } = machine;
  if (phase.name !== 'following') return stay(machine);
  let { seenEnd } = machine;
  let ended: FinishedEvent | undefined;
  const events = read.events.map((event): RunEvent => {
    if (event.type === 'status' || event.type === 'started') seenEnd ||= isExecutionOver(event.status);
    if (event.type !== 'finished') return event;
    ended = stoppedEnding(machine.stop, event);
    return ended;
  });
  const emit: LifecycleCommand = { type: 'emit', events, ...(read.tasks === undefined ? {} : { tasks: read.tasks }) };
  if (ended === undefined) return to({ ...machine, seenEnd }, phase, emit);
  // service.md §3.3, §3.5: branches still running after the failure spend credits; abort them once.
  const branches = machine.rules.onFailedBranches === 'abort' && ended.result.runningNodes.length > 0 ? abortOnce(machine, phase.executionId) : [];
  return to({ ...machine, seenEnd }, { name: 'ending', executionId: phase.executionId, result: ended.result }, ...branches, emit);
}

function pollCompleted(machine: RunMachine): RunStep {
  const { phase, rules } = machine;
  if (phase.name === 'following') return to(machine, CLOSED, { type: 'complete' });
  if (phase.name !== 'finishing' && phase.name !== 'ending') return stay(machine);
  if (phase.result.endedBy === 'failed' && rules.failOnWorkflowError) return to(machine, CLOSED, { type: 'error', error: new WorkflowFailedError(phase.result) });
  return to(machine, CLOSED, { type: 'complete' });
}
