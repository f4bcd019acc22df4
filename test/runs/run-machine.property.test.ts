import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ExecutionStatus, NodeExecution, RunResult } from '../../src/domain/model.js';
import { isRunTimeoutError, isWorkflowFailedError } from '../../src/errors/run-errors.js';
import type { RunEvent } from '../../src/runs/events.js';
import { initialRun, type LifecycleCommand, type LifecycleEvent, reduceRun, type RunRules } from '../../src/runs/run-lifecycle.js';
import { reducerShell } from '../../src/runs/poll.js';
import { CANVAS_ID, node, started } from './fixtures.js';

const WATCHED = 'we-watched';
const STARTED = started().executionId;

interface Setup {
  readonly rules: RunRules;
  readonly signal: boolean;
  readonly handle: boolean;
  /** How a start still on its way at the end goes: answered, its attempt failed (nothing on its way), or refused. */
  readonly lastStart: 'answered' | 'attempt-failed' | 'refused';
}

const setupArb: fc.Arbitrary<Setup> = fc.record({
  rules: fc.record({
    origin: fc.constantFrom<RunRules['origin']>({ kind: 'start', canvasId: CANVAS_ID }, { kind: 'watch', executionId: WATCHED }),
    abortOnUnsubscribe: fc.boolean(),
    failOnWorkflowError: fc.boolean(),
    onFailedBranches: fc.constantFrom('leave', 'abort', 'follow'),
    timeoutMs: fc.constantFrom(undefined, 1000),
  }),
  signal: fc.boolean(),
  handle: fc.boolean(),
  lastStart: fc.constantFrom('answered', 'attempt-failed', 'refused'),
});

function result(status: 'finish' | 'failed', runningNodes: readonly NodeExecution[] = []): RunResult {
  return { executionId: STARTED, status, endedBy: status, nodes: [], output: [], files: [], failedNodes: [], runningNodes };
}

const statusEvent = (status: ExecutionStatus): RunEvent => ({ type: 'status', executionId: STARTED, status });
const finishedEvent = (status: 'finish' | 'failed', running = false): RunEvent => ({ type: 'finished', executionId: STARTED, result: result(status, running ? [node('n2', 'executing')] : []) });

/** The world around one run: what its commands set going, and so which events can come next. */
interface World {
  startLive: boolean;
  sending: boolean;
  pollLive: boolean;
  pollFinished: boolean;
  abortsUnanswered: number;
  tornDown: boolean;
  ended: boolean;
  signalFired: boolean;
  deadlinePassed: boolean;
  executionId: string | undefined;
  /** The subscriber left (unsubscribe, signal, deadline) before the run was over, wanting the execution aborted. */
  leftWantingAbort: boolean;
}

interface Trace {
  readonly commands: { readonly command: LifecycleCommand; readonly after: LifecycleEvent['type'] }[];
  readonly world: World;
  readonly brokenRule: string | undefined;
}

/** The events the world can send now. */
function possible(world: World, setup: Setup): LifecycleEvent[] {
  const events: LifecycleEvent[] = [];
  if (!world.tornDown) {
    events.push({ type: 'unsubscribe' });
    if (setup.signal && !world.signalFired) events.push({ type: 'signal', reason: new Error('left') });
    if (setup.rules.timeoutMs !== undefined && !world.deadlinePassed) events.push({ type: 'deadline' });
    if (setup.handle) events.push({ type: 'control', control: 'cancel' }, { type: 'control', control: 'timeout' }, { type: 'control', control: 'detach' });
  }
  if (world.startLive) {
    events.push({ type: 'sending', sending: !world.sending }, { type: 'start-failed', error: new Error('refused') });
    // An answer comes only to a request that left.
    if (world.sending) events.push({ type: 'started', execution: started() }, { type: 'started', execution: started('finish') });
  }
  if (world.pollLive && !world.pollFinished) {
    events.push(
      { type: 'poll-read', read: { events: [statusEvent('executing')] } },
      { type: 'poll-read', read: { events: [statusEvent('failed')] } },
      { type: 'poll-read', read: { events: [statusEvent('finish')] } },
      { type: 'poll-read', read: { events: [finishedEvent('finish')] } },
      { type: 'poll-read', read: { events: [finishedEvent('failed')] } },
      { type: 'poll-read', read: { events: [finishedEvent('failed', true)] } },
      { type: 'poll-error', error: new Error('network') },
    );
  }
  if (world.pollLive && world.pollFinished) events.push({ type: 'poll-complete' });
  if (world.abortsUnanswered > 0) events.push({ type: 'abort-answered' });
  return events;
}

/** What may still be asked once the subscriber has gone, or the run has ended: the abort, letting go, and a kept start's report. */
const CLEANUP: readonly LifecycleCommand['type'][] = ['abort', 'drop-start', 'stop-following', 'start-in-doubt'];

/**
 * Drives the machine through its shell with the events the choices pick, then lets the world settle:
 * the subscriber leaves (if it has not), a start kept on its way answers. Checks, as it goes, the rules
 * that hold at every step.
 */
function drive(setup: Setup, choices: readonly number[]): Trace {
  const world: World = {
    startLive: false,
    sending: false,
    pollLive: false,
    pollFinished: false,
    abortsUnanswered: 0,
    tornDown: false,
    ended: false,
    signalFired: false,
    deadlinePassed: false,
    executionId: setup.rules.origin.kind === 'watch' ? WATCHED : undefined,
    leftWantingAbort: false,
  };
  const commands: { command: LifecycleCommand; after: LifecycleEvent['type'] }[] = [];
  let brokenRule: string | undefined;
  let reducing: LifecycleEvent['type'] = 'subscribe';
  let unsubscribed = false;
  let afterTeardown = false;
  let finishedSeen = false;
  const reduce: typeof reduceRun = (machine, event) => {
    afterTeardown = unsubscribed;
    unsubscribed ||= event.type === 'unsubscribe';
    reducing = event.type;
    return reduceRun(machine, event);
  };
  const perform = (command: LifecycleCommand): void => {
    commands.push({ command, after: reducing });
    // Teardown lets go (stop following, drop or keep the start, abort); after it, only the abort and letting go of a kept start.
    if (afterTeardown && command.type !== 'abort' && command.type !== 'drop-start' && command.type !== 'start-in-doubt') brokenRule ??= `${command.type} after teardown`;
    if ((reducing === 'unsubscribe' || world.ended) && !CLEANUP.includes(command.type)) brokenRule ??= `${command.type} after the subscriber left`;
    switch (command.type) {
      case 'start':
        world.startLive = true;
        break;
      case 'drop-start':
        world.startLive = false;
        break;
      case 'follow':
        world.pollLive = true;
        break;
      case 'stop-following':
        world.pollLive = false;
        break;
      case 'abort':
        world.abortsUnanswered += 1;
        if (command.executionId !== world.executionId) brokenRule ??= `abort of ${command.executionId}, not of ${String(world.executionId)}`;
        break;
      case 'emit':
        // The shell tells the machine as `finished` goes out (run-lifecycle.ts).
        if (command.events.some((emitted) => emitted.type === 'finished')) {
          finishedSeen = true;
          dispatch({ type: 'finished-delivered' });
        }
        break;
      case 'complete':
      case 'error':
        world.ended = true;
        // rxjs tears the subscription down as it ends: its listeners go, and the shell hears an unsubscribe.
        world.tornDown = true;
        dispatch({ type: 'unsubscribe' });
        break;
      case 'start-in-doubt':
        if (reducing !== 'start-failed') brokenRule ??= `start-in-doubt after ${reducing}`;
        break;
      case 'read-now':
        break;
      default:
        command satisfies never;
    }
  };
  const dispatch = reducerShell(reduce, initialRun(setup.rules), perform);
  const send = (event: LifecycleEvent): void => {
    const over = finishedSeen || world.ended;
    switch (event.type) {
      case 'unsubscribe':
        if (!over && setup.rules.abortOnUnsubscribe) world.leftWantingAbort = true;
        world.tornDown = true;
        break;
      case 'signal':
        world.signalFired = true;
        if (!over && setup.rules.abortOnUnsubscribe) world.leftWantingAbort = true;
        break;
      case 'deadline':
        world.deadlinePassed = true;
        if (!over) world.leftWantingAbort = true;
        break;
      case 'sending':
        world.sending = event.sending;
        break;
      case 'started':
        world.startLive = false;
        world.executionId = event.execution.executionId;
        break;
      case 'start-failed':
        world.startLive = false;
        break;
      case 'poll-read':
        if (event.read.events.some((read) => read.type === 'finished')) world.pollFinished = true;
        break;
      case 'poll-error':
      case 'poll-complete':
        world.pollLive = false;
        break;
      case 'abort-answered':
        world.abortsUnanswered -= 1;
        break;
      case 'subscribe':
      case 'control':
      case 'finished-delivered':
        break;
      default:
        event satisfies never;
    }
    dispatch(event);
    // A start not sent yet is never kept once the subscriber has gone: there is nothing to abort.
    if (world.tornDown && world.startLive && !world.sending) brokenRule ??= `start kept unsent after ${event.type}`;
  };

  send({ type: 'subscribe' });
  for (const choice of choices) {
    const events = possible(world, setup);
    if (events.length === 0) break;
    send(events[choice % events.length]!);
  }
  if (!world.tornDown) send({ type: 'unsubscribe' });
  if (world.startLive && world.sending) {
    if (setup.lastStart === 'answered') send({ type: 'started', execution: started() });
    else if (setup.lastStart === 'refused') send({ type: 'start-failed', error: new Error('refused') });
    else send({ type: 'sending', sending: false });
  }
  return { commands, world, brokenRule };
}

const choicesArb = fc.array(fc.nat(), { maxLength: 40 });
// Interleavings are many and each is cheap: look at more of them than fast-check's default 100.
const runs = { numRuns: 2000 };

describe('the run machine over random interleavings (run-lifecycle.ts)', () => {
  it('sends at most one abort, always of the execution it knows', () => {
    fc.assert(
      fc.property(setupArb, choicesArb, (setup, choices) => {
        const { commands, brokenRule } = drive(setup, choices);
        expect(brokenRule).toBeUndefined();
        expect(commands.filter(({ command }) => command.type === 'abort').length).toBeLessThanOrEqual(1);
      }),
      runs,
    );
  });

  it('never aborts after the run delivered `finished` (only onFailedBranches: abort, with it)', () => {
    fc.assert(
      fc.property(setupArb, choicesArb, (setup, choices) => {
        const { commands } = drive(setup, choices);
        const finishedAt = commands.findIndex(({ command }) => command.type === 'emit' && command.events.some((emitted) => emitted.type === 'finished'));
        if (finishedAt === -1) return;
        expect(commands.slice(finishedAt).some(({ command }) => command.type === 'abort')).toBe(false);
        const branchAbort = commands.slice(0, finishedAt).findIndex(({ command, after }) => command.type === 'abort' && after === 'poll-read');
        if (branchAbort !== -1) expect(setup.rules.onFailedBranches).toBe('abort');
      }),
      runs,
    );
  });

  it('aborts exactly once an execution it left running, when leaving wants it (abortOnUnsubscribe, or a deadline)', () => {
    fc.assert(
      fc.property(setupArb, choicesArb, (setup, choices) => {
        const { commands, world } = drive(setup, choices);
        const aborts = commands.filter(({ command }) => command.type === 'abort');
        if (world.leftWantingAbort && world.executionId !== undefined) expect(aborts).toHaveLength(1);
      }),
      runs,
    );
  });

  it('sends nothing but the abort after teardown, and never keeps an unsent start', () => {
    fc.assert(
      fc.property(setupArb, choicesArb, (setup, choices) => {
        const { commands, world, brokenRule } = drive(setup, choices);
        expect(brokenRule).toBeUndefined();
        // Settled: nothing left subscribed, each started once at most, the run ended once at most.
        expect(world.startLive || world.pollLive).toBe(false);
        expect(commands.filter(({ command }) => command.type === 'start').length).toBeLessThanOrEqual(1);
        expect(commands.filter(({ command }) => command.type === 'follow').length).toBeLessThanOrEqual(1);
        expect(commands.filter(({ command }) => command.type === 'complete' || command.type === 'error').length).toBeLessThanOrEqual(1);
      }),
      runs,
    );
  });

  it('ends as a run must: finish completes, failed errors unless failOnWorkflowError is false, a deadline errors with RunTimeoutError', () => {
    fc.assert(
      fc.property(setupArb, choicesArb, (setup, choices) => {
        const { commands } = drive(setup, choices);
        const finished = commands.find(({ command }) => command.type === 'emit' && command.events.some((emitted) => emitted.type === 'finished'))?.command;
        const ending = commands.find(({ command }) => command.type === 'complete' || command.type === 'error');
        if (ending?.after === 'deadline') expect(ending.command.type === 'error' && isRunTimeoutError(ending.command.error)).toBe(true);
        const endedWith = finished?.type === 'emit' ? finished.events.find((emitted) => emitted.type === 'finished') : undefined;
        if (ending?.after !== 'poll-complete' || endedWith?.type !== 'finished') return;
        const failed = endedWith.result.endedBy === 'failed' && setup.rules.failOnWorkflowError;
        expect(ending.command.type === 'error' && isWorkflowFailedError(ending.command.error)).toBe(failed);
        expect(ending.command.type === 'complete').toBe(!failed);
      }),
      runs,
    );
  });

  it('emits `finished` last, and a started run announces its execution before anything else', () => {
    fc.assert(
      fc.property(setupArb, choicesArb, (setup, choices) => {
        const emitted = drive(setup, choices).commands.flatMap(({ command }) => (command.type === 'emit' ? command.events : []));
        const finishedAt = emitted.findIndex((event) => event.type === 'finished');
        if (finishedAt !== -1) expect(finishedAt).toBe(emitted.length - 1);
        if (setup.rules.origin.kind === 'start' && emitted.length > 0 && emitted[0]!.executionId !== '') expect(emitted[0]!.type).toBe('started');
      }),
      runs,
    );
  });
});

describe('the run machine, rule by rule', () => {
  const rules: RunRules = { origin: { kind: 'start', canvasId: CANVAS_ID }, abortOnUnsubscribe: true, failOnWorkflowError: true, onFailedBranches: 'leave', timeoutMs: undefined };
  const commandsOf = (events: readonly LifecycleEvent[], given: RunRules = rules): LifecycleCommand['type'][][] => {
    let machine = initialRun(given);
    return events.map((event) => {
      const step = reduceRun(machine, event);
      machine = step.state;
      return step.commands.map((command) => command.type);
    });
  };

  it('drops a start not sent yet when unsubscribed, and keeps one on its way until its id arrives, then aborts it', () => {
    expect(commandsOf([{ type: 'subscribe' }, { type: 'unsubscribe' }])).toEqual([['start'], ['drop-start']]);
    expect(commandsOf([{ type: 'subscribe' }, { type: 'sending', sending: true }, { type: 'unsubscribe' }, { type: 'started', execution: started() }])).toEqual([['start'], [], [], ['abort']]);
  });

  it('drops a kept start whose attempt failed with nothing on its way: no execution, nothing to abort', () => {
    expect(commandsOf([{ type: 'subscribe' }, { type: 'sending', sending: true }, { type: 'unsubscribe' }, { type: 'sending', sending: false }])).toEqual([['start'], [], [], ['drop-start']]);
  });

  it('cancels a start on its way without abortOnUnsubscribe', () => {
    expect(commandsOf([{ type: 'subscribe' }, { type: 'sending', sending: true }, { type: 'unsubscribe' }], { ...rules, abortOnUnsubscribe: false })).toEqual([['start'], [], ['drop-start']]);
  });

  it('a cancel waits for a start on its way to be sent again or answered: unsent, the run ends with no execution', () => {
    const handle = { ...rules, abortOnUnsubscribe: false };
    expect(commandsOf([{ type: 'subscribe' }, { type: 'sending', sending: true }, { type: 'control', control: 'cancel' }, { type: 'sending', sending: false }], handle)).toEqual([
      ['start'],
      [],
      [],
      ['drop-start', 'emit', 'complete'],
    ]);
  });

  it('errors with the executionId and aborts nothing when a read fails', () => {
    let machine = initialRun(rules);
    for (const event of [{ type: 'subscribe' }, { type: 'sending', sending: true }, { type: 'started', execution: started() }] as const) machine = reduceRun(machine, event).state;
    expect(reduceRun(machine, { type: 'poll-error', error: new Error('x') }).commands).toEqual([{ type: 'error', error: new Error('x'), executionId: STARTED }]);
    machine = reduceRun(machine, { type: 'poll-error', error: new Error('x') }).state;
    expect(reduceRun(machine, { type: 'unsubscribe' }).commands).toEqual([]);
  });
});
