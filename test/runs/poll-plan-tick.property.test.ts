import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PollHeadroom } from '../../src/domain/budget.js';
import type { NodeExecution } from '../../src/domain/model.js';
import { HEADROOM_FLOOR_MS, nextCadence, SERVICE_TICK_MARGIN_MS, SERVICE_TICK_MS, withHeadroom } from '../../src/runs/cadence.js';
import type { OutputMode } from '../../src/runs/output-policy.js';
import { initialPoll, type PollCommand, type PollPlan, type PollRules, reducePoll } from '../../src/runs/poll-plan.js';
import { EXECUTION_ID, node, output, outputNode, snapshot } from './fixtures.js';

/*
 * service.md §3.2, §3.3: a reading can make a change certain within one service tick (every node done
 * while the execution still says `executing`; a node ended while another waits to start). The next
 * read then comes a tick later, ranked by the bracket's start, with no duration model and in either
 * output mode; any other reading leaves the cadence as it was.
 */

const boundsArb = fc
  .record({ minMs: fc.integer({ min: 0, max: SERVICE_TICK_MS }), maxMs: fc.integer({ min: SERVICE_TICK_MS + SERVICE_TICK_MARGIN_MS, max: 60_000 }) })
  .map(({ minMs, maxMs }) => ({ minMs, maxMs }));

const headroomArb: fc.Arbitrary<PollHeadroom | undefined> = fc.option(
  fc.record({ activeRuns: fc.integer({ min: 1, max: 200 }), readsPerMinute: fc.integer({ min: 1, max: 100 }) }),
  { nil: undefined },
);

/** An account with too little for every run's cadence: the fair interval is past any bounds' maximum. */
const saturatedArb: fc.Arbitrary<PollHeadroom> = fc.record({ activeRuns: fc.integer({ min: 1_000, max: 5_000 }), readsPerMinute: fc.integer({ min: 1, max: 100 }) });

/** Reads to spare: the fair interval (never under 2 s, `HEADROOM_FLOOR_MS`) is within the bounds' maximum. */
const looseArb: fc.Arbitrary<PollHeadroom | undefined> = fc.option(fc.record({ activeRuns: fc.integer({ min: 1, max: 3 }), readsPerMinute: fc.constant(100) }), { nil: undefined });

interface Reading {
  readonly nodes: readonly NodeExecution[];
  /** Emulator ms after the previous read's answer. */
  readonly afterMs: number;
  readonly random: number;
  readonly headroom: PollHeadroom | undefined;
}

const gapArb = fc.integer({ min: 0, max: 30_000 });
const randomArb = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

/** Wakes the plan at `at` and answers every read it asks with `reading`; the commands of the last answer. */
function answer(plan: PollPlan, reading: Reading, at: number): { plan: PollPlan; commands: PollCommand[] } {
  const shown = output(reading.nodes.map((entry) => outputNode(entry.nodeId, entry.status)));
  let step: { state: PollPlan; commands: readonly PollCommand[] } = reducePoll(plan, { type: 'wake', at });
  for (;;) {
    const read = step.commands.find((command) => command.type === 'read');
    if (read?.type !== 'read') return { plan: step.state, commands: [...step.commands] };
    const { random, headroom } = reading;
    step =
      read.endpoint === 'status'
        ? reducePoll(step.state, { type: 'status', snapshot: snapshot('executing', reading.nodes), at, random, headroom })
        : reducePoll(step.state, { type: 'output', output: shown, at, random, headroom });
  }
}

/** The plan after `begin` at 0 and each reading in turn; the commands of the last one and when it answered. */
function follow(rules: PollRules, readings: readonly Reading[]): { plan: PollPlan; commands: PollCommand[]; before: PollPlan; at: number; previousAt: number } {
  let plan = reducePoll(initialPoll(rules, 'executing'), { type: 'begin', at: 0 }).state;
  let before = plan;
  let at = 0;
  let previousAt = 0;
  let commands: PollCommand[] = [];
  for (const reading of readings) {
    before = plan;
    previousAt = at;
    at += reading.afterMs;
    ({ plan, commands } = answer(plan, reading, at));
  }
  return { plan, commands, before, at, previousAt };
}

const waitOf = (commands: readonly PollCommand[]): number | undefined => commands.flatMap((command) => (command.type === 'wait' ? [command.ms] : []))[0];

const rulesOf = (bounds: { minMs: number; maxMs: number }, outputMode: OutputMode): PollRules => ({
  executionId: EXECUTION_ID,
  canvasId: undefined,
  bounds,
  output: outputMode,
  onFailedBranches: 'leave',
});

describe('the read after a change certain within one service tick (poll-plan.ts)', () => {
  it('every node done, the execution still executing, a saturated budget: the status is read one tick later, due at the bracket\'s start, with no model, stream or final', () => {
    fc.assert(
      fc.property(
        boundsArb,
        fc.constantFrom<OutputMode>('stream', 'final'),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(gapArb, randomArb, headroomArb), { minLength: 1, maxLength: 4 }),
        fc.tuple(gapArb, randomArb, saturatedArb),
        (bounds, outputMode, count, working, [lastGap, random, headroom]) => {
          const ids = Array.from({ length: count }, (_, index) => `node-${String(index)}`);
          const running: Reading[] = working.map(([afterMs, spread, room]) => ({ nodes: ids.map((id) => node(id, 'executing')), afterMs, random: spread, headroom: room }));
          const done: Reading = { nodes: ids.map((id) => node(id, 'finish')), afterMs: lastGap, random, headroom };
          const { plan, commands, at, previousAt } = follow(rulesOf(bounds, outputMode), [...running, done]);
          const waitMs = waitOf(commands);
          expect(waitMs).toBeGreaterThanOrEqual(SERVICE_TICK_MS);
          expect(waitMs).toBeLessThanOrEqual(SERVICE_TICK_MS + SERVICE_TICK_MARGIN_MS);
          const next = reducePoll(plan, { type: 'wake', at: at + (waitMs ?? 0) });
          expect(next.commands).toEqual([{ type: 'read', endpoint: 'status', dueAt: previousAt }]);
        },
      ),
    );
  });

  it('a node ended and its child waits, a saturated budget: the status is read one tick later, due at the bracket\'s start', () => {
    fc.assert(
      fc.property(boundsArb, fc.constantFrom<OutputMode>('stream', 'final'), gapArb, gapArb, randomArb, saturatedArb, (bounds, outputMode, firstGap, gap, random, headroom) => {
        const first: Reading = { nodes: [node('parent', 'executing'), node('child', 'init')], afterMs: firstGap, random, headroom };
        const ended: Reading = { nodes: [node('parent', 'finish'), node('child', 'init')], afterMs: gap, random, headroom };
        const { plan, commands, at, previousAt } = follow(rulesOf(bounds, outputMode), [first, ended]);
        const waitMs = waitOf(commands);
        expect(waitMs).toBeGreaterThanOrEqual(SERVICE_TICK_MS);
        expect(waitMs).toBeLessThanOrEqual(SERVICE_TICK_MS + SERVICE_TICK_MARGIN_MS);
        expect(reducePoll(plan, { type: 'wake', at: at + (waitMs ?? 0) }).commands).toEqual([{ type: 'read', endpoint: 'status', dueAt: previousAt }]);
      }),
    );
  });

  it('the end certain right after a child\'s start was (a content node done on the tick): its read keeps the first one\'s place', () => {
    fc.assert(
      fc.property(boundsArb, fc.constantFrom<OutputMode>('stream', 'final'), gapArb, gapArb, randomArb, saturatedArb, (bounds, outputMode, firstGap, gap, random, headroom) => {
        const first: Reading = { nodes: [node('task', 'executing'), node('document', 'init')], afterMs: firstGap, random, headroom };
        const ended: Reading = { nodes: [node('task', 'finish'), node('document', 'init')], afterMs: gap, random, headroom };
        const rules = rulesOf(bounds, outputMode);
        const chained = follow(rules, [first, ended]);
        const waitMs = waitOf(chained.commands) ?? 0;
        const done: Reading = { nodes: [node('task', 'finish'), node('document', 'finish')], afterMs: waitMs, random, headroom };
        const { plan, commands, at } = follow(rules, [first, ended, done]);
        expect(waitOf(commands)).toBe(waitMs);
        expect(reducePoll(plan, { type: 'wake', at: at + waitMs }).commands).toEqual([{ type: 'read', endpoint: 'status', dueAt: firstGap }]);
      }),
    );
  });

  it('with reads to spare, the cadence\'s quicker read stays, never later than the tick, and is ranked', () => {
    fc.assert(
      fc.property(boundsArb.filter(({ maxMs }) => maxMs >= HEADROOM_FLOOR_MS), fc.constantFrom<OutputMode>('stream', 'final'), gapArb, gapArb, randomArb, looseArb, (bounds, outputMode, firstGap, gap, random, headroom) => {
        const ids = ['node-0', 'node-1'];
        const running: Reading = { nodes: ids.map((id) => node(id, 'executing')), afterMs: firstGap, random, headroom };
        const done: Reading = { nodes: ids.map((id) => node(id, 'finish')), afterMs: gap, random, headroom };
        const { plan, commands, before, at, previousAt } = follow(rulesOf(bounds, outputMode), [running, done]);
        const cadenceMs = nextCadence(withHeadroom(bounds, headroom), before.cadence, 'changed', () => random).waitMs;
        const waitMs = waitOf(commands) ?? 0;
        expect(waitMs).toBe(Math.max(bounds.minMs, Math.min(cadenceMs, SERVICE_TICK_MS + SERVICE_TICK_MARGIN_MS)));
        expect(waitMs).toBeLessThanOrEqual(SERVICE_TICK_MS + SERVICE_TICK_MARGIN_MS);
        expect(reducePoll(plan, { type: 'wake', at: at + waitMs }).commands).toEqual([{ type: 'read', endpoint: 'status', dueAt: previousAt }]);
      }),
    );
  });

  it('a node ended while another still executes: nothing is certain, the cadence reads on, unranked', () => {
    fc.assert(
      fc.property(boundsArb, fc.constantFrom<OutputMode>('stream', 'final'), gapArb, gapArb, randomArb, headroomArb, (bounds, outputMode, firstGap, gap, random, headroom) => {
        const first: Reading = { nodes: [node('left', 'executing'), node('right', 'executing'), node('join', 'init')], afterMs: firstGap, random, headroom };
        const ended: Reading = { nodes: [node('left', 'finish'), node('right', 'executing'), node('join', 'init')], afterMs: gap, random, headroom };
        const { plan, commands, before } = follow(rulesOf(bounds, outputMode), [first, ended]);
        expect(waitOf(commands)).toBe(nextCadence(withHeadroom(bounds, headroom), before.cadence, 'changed', () => random).waitMs);
        expect(plan.dueAt).toBeUndefined();
      }),
    );
  });

  it('it is one read: an execution that stays executing after every node is done is read on its cadence, unranked', () => {
    fc.assert(
      fc.property(boundsArb, fc.constantFrom<OutputMode>('stream', 'final'), gapArb, fc.integer({ min: 0, max: 1_000 }), randomArb, headroomArb, (bounds, outputMode, gap, again, random, headroom) => {
        const ids = ['node-0', 'node-1'];
        const done = (afterMs: number): Reading => ({ nodes: ids.map((id) => node(id, 'finish')), afterMs, random, headroom });
        const { plan, commands, before } = follow(rulesOf(bounds, outputMode), [{ nodes: ids.map((id) => node(id, 'executing')), afterMs: gap, random, headroom }, done(gap), done(again)]);
        expect(waitOf(commands)).toBe(nextCadence(withHeadroom(bounds, headroom), before.cadence, 'settling', () => random).waitMs);
        expect(reducePoll(plan, { type: 'wake', at: 0 }).commands).toEqual([{ type: 'read', endpoint: 'status' }]);
      }),
    );
  });

  it('without such a reading the cadence is unchanged: the wait is the cadence\'s, and the read is not ranked', () => {
    fc.assert(
      fc.property(
        boundsArb,
        fc.constantFrom<OutputMode>('stream', 'final'),
        fc.array(fc.tuple(gapArb, randomArb, headroomArb, fc.boolean()), { minLength: 1, maxLength: 6 }),
        (bounds, outputMode, steps) => {
          // Nodes only start (none ends): nothing is certain within a tick.
          const readings: Reading[] = steps.map(([afterMs, random, headroom, second]) => ({
            nodes: [node('node-0', 'executing'), node('node-1', second ? 'executing' : 'init')],
            afterMs,
            random,
            headroom,
          }));
          let plan = reducePoll(initialPoll(rulesOf(bounds, outputMode), 'executing'), { type: 'begin', at: 0 }).state;
          let at = 0;
          for (const reading of readings) {
            const before = plan;
            at += reading.afterMs;
            const step = answer(plan, reading, at);
            plan = step.plan;
            const changed = step.commands.some((command) => command.type === 'emit');
            expect(waitOf(step.commands)).toBe(nextCadence(withHeadroom(bounds, reading.headroom), before.cadence, changed ? 'changed' : 'quiet', () => reading.random).waitMs);
            expect(plan.dueAt).toBeUndefined();
          }
        },
      ),
    );
  });
});
