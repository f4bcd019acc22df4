import { readDueAt } from '../../src/budget/budget-core.js';
import { drawDurationMs } from '../../src/emulator/engine/duration-draw.js';
import type { DurationModel } from '../../src/domain/durations.js';
import type { ExecutionOutput, ExecutionSnapshot, NodeStatus } from '../../src/domain/model.js';
import { initialPoll, type PollCommand, type PollInput, reducePoll, reducerShell } from '../../src/runs/poll.js';

/**
 * One run of a chain of task nodes with the given durations, followed by the poll reducer alone (no
 * budget, no HTTP): every read answers `LATENCY_MS` after it is made, showing the execution as it is
 * then. For the learned-durations properties: the same reducer the client runs, with or without a
 * model, timing its own reads (`readDueAt`) as a run without a budget does.
 */
export const CANVAS = 'c-sim';
const LATENCY_MS = 40;
/** service.md §3.3: the execution turns `finish` on the tick after its last node. */
const SETTLE_MS = 1_500;

export interface SimulatedRun {
  /** Per node end, how long after it the run saw it. */
  readonly latenciesMs: readonly number[];
  /** Times of the status reads made. */
  readonly readsAt: readonly number[];
  readonly reads: number;
}

export function simulateRun(durationsMs: readonly number[], options: { readonly model?: DurationModel } = {}): SimulatedRun {
  const ends = durationsMs.reduce<number[]>((acc, ms) => [...acc, (acc.at(-1) ?? 0) + ms], []);
  const settledAt = (ends.at(-1) ?? 0) + SETTLE_MS;
  const nodeId = (index: number): string => `node-${String(index)}`;
  const statusAt = (at: number, index: number): NodeStatus => (at >= (ends[index] ?? 0) ? 'finish' : at >= (index === 0 ? 0 : (ends[index - 1] ?? 0)) ? 'executing' : 'init');
  const snapshot = (at: number): ExecutionSnapshot => ({
    executionId: 'e-sim',
    status: at >= settledAt ? 'finish' : 'executing',
    rawStatus: at >= settledAt ? 'finish' : 'executing',
    nodes: durationsMs.map((_, index) => ({ nodeId: nodeId(index), status: statusAt(at, index), rawStatus: statusAt(at, index) })),
  });
  const output = (at: number): ExecutionOutput => ({
    files: [],
    output: durationsMs.map((_, index) => {
      const status = statusAt(at, index);
      const start = index === 0 ? 0 : (ends[index - 1] ?? 0);
      return {
        nodeId: nodeId(index),
        status,
        rawStatus: status,
        messages: [],
        ...(status === 'init' ? {} : { startTime: new Date(start).toISOString() }),
        ...(status === 'finish' ? { endTime: new Date(ends[index] ?? 0).toISOString() } : {}),
      };
    }),
  });

  const { model } = options;
  let now = 0;
  let pending: { readonly at: number; readonly input: () => PollInput } | undefined;
  const run = { ended: false };
  const seenEnd = new Map<string, number>();
  const readsAt: number[] = [];
  const perform = (command: PollCommand): void => {
    switch (command.type) {
      case 'wait':
        pending = { at: readDueAt(command.need, undefined), input: () => ({ type: 'wake', at: now }) };
        return;
      case 'read':
        if (command.endpoint === 'status') readsAt.push(now);
        pending = {
          at: now + LATENCY_MS,
          input: () =>
            command.endpoint === 'status'
              ? { type: 'status', snapshot: snapshot(now), at: now, random: 0.5 }
              : { type: 'output', output: output(now), at: now, random: 0.5 },
        };
        return;
      case 'emit':
        for (const event of command.events) if (event.type === 'node' && event.status === 'finish' && !seenEnd.has(event.nodeId)) seenEnd.set(event.nodeId, now);
        return;
      case 'learn':
        for (const learned of command.durations) model?.record(CANVAS, learned.nodeId, learned.durationMs);
        return;
      case 'end':
        run.ended = true;
        return;
      case 'warn':
        return;
      default:
        command satisfies never;
    }
  };
  const rules = {
    executionId: 'e-sim',
    canvasId: CANVAS,
    bounds: { minMs: 500, maxMs: 10_000 },
    output: 'final' as const,
    onFailedBranches: 'leave' as const,
    estimateOf: model === undefined ? undefined : (id: string) => model.estimate(CANVAS, id),
  };
  const dispatch = reducerShell(reducePoll, initialPoll(rules, 'executing'), perform);
  dispatch({ type: 'begin', at: 0 });
  while (!run.ended && pending !== undefined) {
    const next: { readonly at: number; readonly input: () => PollInput } = pending;
    pending = undefined;
    now = next.at;
    dispatch(next.input());
  }
  const latenciesMs = ends.map((end, index) => (seenEnd.get(nodeId(index)) ?? Number.POSITIVE_INFINITY) - end);
  return { latenciesMs, readsAt, reads: readsAt.length };
}

/** Deterministic log-normal draws with the given mean and coefficient of variation: the emulator's own (`durationCv`). */
export function logNormalDraws(seed: number, count: number, meanMs: number, cv: number): number[] {
  return Array.from({ length: count }, (_, ordinal) => drawDurationMs({ canvasId: 'c-sim', nodeId: String(seed), ordinal, meanMs, cv }));
}
