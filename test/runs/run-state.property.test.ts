import fc from 'fast-check';
import { map, type Observable, share, timer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ExecutionStatus, NodeStatus } from '../../src/domain/model.js';
import { runsOver } from '../../src/runs/runs.js';
import { nodeRank } from '../../src/runs/execution-view.js';
import { type RunState, sampleRunState, toRunState } from '../../src/runs/run-state.js';
import { ExecutionModel, type PartialOutputMode, type Scenario, scenarioArb } from './execution-model.js';
import { CANVAS_ID, scriptedSource, started, testScheduler } from './fixtures.js';

/** What the service showed in one answer: a status read lists every node; an output read, the task nodes. */
interface Shown {
  readonly status?: ExecutionStatus;
  readonly nodes: ReadonlyMap<string, NodeStatus>;
  /** Task nodes done and in all, at that moment (every node of the model is a task; `node-start` is not). */
  readonly done: number;
  readonly total: number;
}

const STEP_MS = 50;

function shownBy(model: ExecutionModel, kind: 'status' | 'output'): Shown {
  const reading = model.read(true);
  const listed = kind === 'status' ? reading.status.nodes : reading.output.output;
  const tasks = reading.output.output;
  return {
    ...(kind === 'status' ? { status: reading.status.status } : {}),
    nodes: new Map(listed.map((entry) => [entry.nodeId, entry.status])),
    done: tasks.filter((entry) => entry.status === 'finish' || entry.status === 'failed').length,
    total: tasks.length,
  };
}

/** The model after the scenario's steps, then driven to its end, one step every `STEP_MS`. */
function schedule(model: ExecutionModel, scenario: Scenario, at: (work: () => void, delay: number) => void): void {
  const steps = [...scenario.steps];
  // Past the scenario, every node advances until the execution ends (no failure: it may have failed already).
  for (let round = 0; round < model.nodes.length * 3 + 2; round += 1) {
    for (let node = 0; node < model.nodes.length; node += 1) steps.push({ ...scenario.steps[0]!, node, action: 'advance', fail: false });
  }
  steps.forEach((step, index) => {
    at(() => {
      model.apply(step);
    }, (index + 1) * STEP_MS);
  });
}

/** Runs the scenario through a real run in virtual time; every state, sampled and not, and every answer. */
function observe(mode: PartialOutputMode, scenario: Scenario, output: 'stream' | 'final', sampleMs: number) {
  const model = new ExecutionModel(mode, scenario.parents);
  const shown: Shown[] = [];
  const every: RunState[] = [];
  const sampled: RunState[] = [];
  testScheduler().run(({ cold, flush }) => {
    const answer = <T>(read: () => T): Observable<T> => timer(3).pipe(map(read));
    const source = scriptedSource({
      start: () => cold('-(s|)', { s: started() }),
      status: () =>
        answer(() => {
          shown.push(shownBy(model, 'status'));
          return model.read(false).status;
        }),
      output: () =>
        answer(() => {
          shown.push(shownBy(model, 'output'));
          return model.read(true).output;
        }),
    });
    schedule(model, scenario, (work, delay) => timer(delay).subscribe(work));
    const states$ = runsOver(source, { random: () => 0.5, polling: { minMs: 100, maxMs: 1_000 } })
      .run(CANVAS_ID, {}, { output, failOnWorkflowError: false })
      .pipe(toRunState(), share());
    states$.pipe(sampleRunState(sampleMs)).subscribe((state) => sampled.push(state));
    states$.subscribe((state) => every.push(state));
    flush();
  });
  return { shown, every, sampled };
}

/** The first answer at or after `from` whose node statuses are exactly the state's. */
function matchingAnswer(state: RunState, shown: readonly Shown[], from: number): number {
  return shown.findIndex((answer, index) => {
    if (index < from) return false;
    if (answer.status !== undefined && (answer.status !== state.status || answer.nodes.size !== state.nodes.length)) return false;
    return state.nodes.every((entry) => !answer.nodes.has(entry.nodeId) || answer.nodes.get(entry.nodeId) === entry.status);
  });
}

describe.each<PartialOutputMode>(['service', 'spec'])('sampled run states, %s partial output', (mode) => {
  it('shows only states the service could have shown: one answer each, in order, progress never above the real one', () => {
    fc.assert(
      fc.property(scenarioArb, fc.constantFrom<'stream' | 'final'>('stream', 'final'), fc.integer({ min: 1, max: 2_000 }), (scenario, output, sampleMs) => {
        const { shown, every, sampled } = observe(mode, scenario, output, sampleMs);
        let from = 0;
        let before: RunState | undefined;
        // The first state is `started`, before any read.
        for (const state of sampled.slice(1)) {
          if (state.status === 'finish') expect(state.nodes.every((entry) => entry.status === 'finish')).toBe(true);
          const index = matchingAnswer(state, shown, from);
          expect(index, `no answer shows ${JSON.stringify(state.nodes.map((entry) => [entry.nodeId, entry.status]))}`).toBeGreaterThanOrEqual(0);
          const real = shown[index]!;
          expect(state.progress.done * real.total).toBeLessThanOrEqual(real.done * state.progress.total);
          for (const entry of state.nodes) {
            const earlier = before?.nodes.find((candidate) => candidate.nodeId === entry.nodeId);
            if (earlier !== undefined) expect(nodeRank(entry.status)).toBeGreaterThanOrEqual(nodeRank(earlier.status));
          }
          from = index;
          before = state;
        }
        expect(sampled.at(-1)).toEqual(every.at(-1));
        expect(sampled.at(-1)?.result).toBeDefined();
        expect(sampled.length).toBeLessThanOrEqual(every.length);
      }),
      { numRuns: 60 },
    );
  });
});
