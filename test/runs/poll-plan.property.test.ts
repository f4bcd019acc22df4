import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readDueAt } from '../../src/budget/budget-core.js';
import type { NodeStatus } from '../../src/domain/model.js';
import type { RunEvent } from '../../src/runs/events.js';
import { initialPoll, OUTPUT_SPACING_MS, type OutputMode, type PollCommand, type PollInput, reducePoll, reducerShell } from '../../src/runs/poll.js';
import type { FailedBranches } from '../../src/runs/run-lifecycle.js';
import { ExecutionModel, type Scenario, scenarioArb } from './execution-model.js';
import { EXECUTION_ID } from './fixtures.js';

const BOUNDS = { minMs: 100, maxMs: 400 };

interface Setup {
  readonly scenario: Scenario;
  readonly output: OutputMode;
  readonly onFailedBranches: FailedBranches;
  readonly watch: boolean;
  /** Per world turn: move the execution on, answer what the plan waits on, or poke it (an abort answered). */
  readonly turns: readonly ('step' | 'deliver' | 'poke')[];
}

const setupArb: fc.Arbitrary<Setup> = fc.record({
  scenario: scenarioArb,
  output: fc.constantFrom<OutputMode>('stream', 'final'),
  onFailedBranches: fc.constantFrom<FailedBranches>('leave', 'abort', 'follow'),
  watch: fc.boolean(),
  turns: fc.array(fc.constantFrom('step', 'step', 'deliver', 'deliver', 'deliver', 'poke'), { maxLength: 150 }),
});

interface Issued {
  readonly command: PollCommand;
  readonly at: number;
  /** What the plan had been shown when it asked: could the output have changed since it was last read? */
  readonly outputCanHaveChanged: boolean;
  /** A node shown ended since the last output read, or the end shown. */
  readonly endShownSinceOutput: boolean;
  readonly after: PollInput['type'];
}

/**
 * Drives the poll plan through its shell against a model execution (service.md §3–4, execution-model.ts):
 * the world answers each read with what the model shows at that moment, fires each wait after its
 * time, and pokes the plan at random. Past the turns, every node is moved to its end so the run can end.
 */
function drive(setup: Setup) {
  const model = new ExecutionModel('service', setup.scenario.parents);
  const issued: Issued[] = [];
  const emitted: RunEvent[] = [];
  let now = 0;
  let inFlight: 'wait' | 'status' | 'output' | undefined;
  let waitMs = 0;
  // In an object: set by `perform`, read by the loops below.
  const run = { ended: false };
  let broken: string | undefined;
  let reducing: PollInput['type'] = 'begin';
  // Poked while a read was on its way: the next thing asked is the status, at once.
  let pokedDuringRead = false;
  // What the plan has been shown, node by node, and as it stood at the last output read.
  const shown = new Map<string, NodeStatus>();
  let shownAtOutput = new Map<string, NodeStatus>();
  let terminalShown = false;
  const show = (nodes: readonly { nodeId: string; status: NodeStatus }[]): void => {
    for (const entry of nodes) shown.set(entry.nodeId, entry.status);
  };
  const endShownSinceOutput = (): boolean =>
    terminalShown || [...shown].some(([nodeId, status]) => (status === 'finish' || status === 'failed') && shownAtOutput.get(nodeId) !== status);
  const outputCanHaveChanged = (): boolean => endShownSinceOutput() || [...shown.values()].includes('executing');

  const perform = (command: PollCommand): void => {
    issued.push({ command, at: now, outputCanHaveChanged: outputCanHaveChanged(), endShownSinceOutput: endShownSinceOutput(), after: reducing });
    if (run.ended) broken ??= `${command.type} after the end`;
    switch (command.type) {
      case 'wait':
      case 'read':
        // The interpreter's one slot: a read ends a pending wait (a poke), never another read.
        if (inFlight === 'status' || inFlight === 'output') broken ??= `${command.type} while a ${inFlight} read is on its way`;
        if (pokedDuringRead) {
          // The output read that completes a status read may come first; then the poke's status read, with no wait.
          const completing = command.type === 'read' && command.endpoint === 'output' && reducing === 'status';
          if (command.type === 'wait' || (command.endpoint === 'output' && !completing)) broken ??= `${command.type} after a poke during a read`;
          if (command.type === 'read' && command.endpoint === 'status') pokedDuringRead = false;
        }
        if (command.type === 'wait') {
          inFlight = 'wait';
          waitMs = readDueAt(command.need, undefined) - now;
        } else {
          inFlight = command.endpoint;
          if (command.endpoint === 'output') shownAtOutput = new Map(shown);
        }
        break;
      case 'emit':
        emitted.push(...command.events);
        break;
      case 'end':
        run.ended = true;
        inFlight = undefined;
        break;
      case 'warn':
      case 'learn':
        break;
      default:
        command satisfies never;
    }
  };
  const dispatch = reducerShell(
    (plan, input: PollInput) => {
      reducing = input.type;
      return reducePoll(plan, input);
    },
    initialPoll({ executionId: EXECUTION_ID, canvasId: undefined, bounds: BOUNDS, output: setup.output, onFailedBranches: setup.onFailedBranches }, setup.watch ? undefined : 'executing'),
    perform,
  );
  const deliver = (): void => {
    const pending = inFlight;
    if (pending === undefined) return;
    inFlight = undefined;
    if (pending === 'wait') {
      now += waitMs;
      dispatch({ type: 'wake', at: now });
      return;
    }
    now += 7;
    const reading = model.read(true);
    if (pending === 'status') {
      show(reading.status.nodes);
      terminalShown ||= reading.status.status !== 'executing';
      dispatch({ type: 'status', snapshot: reading.status, at: now, random: 0.5 });
    } else {
      show(reading.output.output);
      dispatch({ type: 'output', output: reading.output, at: now, random: 0.5 });
    }
  };

  dispatch({ type: 'begin', at: now });
  const steps = [...setup.scenario.steps];
  for (const turn of setup.turns) {
    if (run.ended) break;
    if (turn === 'step' && steps.length > 0) model.apply(steps.shift()!);
    else if (turn === 'poke') {
      if (inFlight === 'status' || inFlight === 'output') pokedDuringRead = true;
      dispatch({ type: 'poke' });
    } else deliver();
  }
  // Every node moves on to its end (without failing), one step per delivery, until the run ends.
  const finishing = model.nodes.flatMap((_, node) => [node, node, node]).map((node) => ({ ...setup.scenario.steps[0]!, node, action: 'advance' as const, fail: false }));
  for (let turn = 0; turn < 2000 && !run.ended; turn += 1) {
    const step = finishing.shift();
    if (step !== undefined) model.apply(step);
    else model.apply({ ...setup.scenario.steps[0]!, action: 'text' });
    deliver();
  }
  return { issued, emitted, ended: run.ended, broken, model };
}

// The model takes fast-check's default number of runs: each one is a whole execution.
describe('the poll plan over random executions and interleavings (poll.ts)', () => {
  it('has at most one read on its way, and no wait while it is; ends, and asks nothing after', () => {
    fc.assert(
      fc.property(setupArb, (setup) => {
        const { ended, broken } = drive(setup);
        expect(broken).toBeUndefined();
        expect(ended).toBe(true);
      }),
    );
  });

  it('reads the output only when it can have changed: a node executing (spaced by 3 s), a node ended since the last output read, or the end', () => {
    fc.assert(
      fc.property(setupArb, (setup) => {
        const { issued } = drive(setup);
        const outputReads = issued.filter(({ command }) => command.type === 'read' && command.endpoint === 'output');
        for (const read of outputReads) expect(read.outputCanHaveChanged).toBe(true);
        // service.md §4.4: new text comes in batches about every 3 s; sooner only for a node that ended, or the end.
        outputReads.forEach((read, index) => {
          const previous = outputReads[index - 1];
          if (previous !== undefined && !read.endShownSinceOutput) expect(read.at - previous.at).toBeGreaterThanOrEqual(OUTPUT_SPACING_MS);
        });
        // `final`: once, at the end, after the status read that showed it.
        if (setup.output === 'final') {
          expect(outputReads).toHaveLength(1);
          expect(outputReads[0]!.after).toBe('status');
        }
      }),
    );
  });

  it('after a terminal status, reads the output once more at most and ends with `finished`, never waiting again', () => {
    fc.assert(
      fc.property(setupArb, (setup) => {
        const { issued, emitted, model } = drive(setup);
        const finished = emitted.filter((event) => event.type === 'finished');
        expect(finished).toHaveLength(1);
        expect(emitted.at(-1)).toBe(finished[0]);
        expect(issued.at(-1)?.command.type).toBe('end');
        expect(finished[0]!.result.status).toBe(model.status);
        // What follows the status read that showed the end: perhaps the output read, then `finished`.
        const lastStatus = issued.map(({ command }) => command).findLastIndex((command) => command.type === 'read' && command.endpoint === 'status');
        const after = issued.slice(lastStatus + 1).map(({ command }) => command.type);
        expect(after).not.toContain('wait');
        expect(after.filter((type) => type === 'read').length).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('waits within the cadence bounds, reads the status first after a poke, and only a watch reads at once', () => {
    fc.assert(
      fc.property(setupArb, (setup) => {
        const { issued } = drive(setup);
        // A wait's bounds count from the status read it follows (`need.since`): an output read may come
        // between that read and the wait, which then has that much less to go.
        const waits = issued.flatMap(({ command, at }) => {
          if (command.type !== 'wait') return [];
          const dueAt = readDueAt(command.need, undefined);
          expect(dueAt).toBeGreaterThanOrEqual(at);
          return [dueAt - command.need.since];
        });
        expect(waits[0]).toBe(setup.watch ? 0 : BOUNDS.minMs);
        for (const ms of waits.slice(1)) {
          expect(ms).toBeGreaterThanOrEqual(BOUNDS.minMs);
          expect(ms).toBeLessThanOrEqual(BOUNDS.maxMs);
        }
        for (const { command, after } of issued) if (after === 'poke' && command.type === 'read') expect(command.endpoint).toBe('status');
      }),
    );
  });
});
