import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/emulator/index.js';
import type { Emulator, ExecutionView, WorkflowDefinition } from '../../src/emulator/index.js';
import { drawDurationMs } from '../../src/emulator/engine/duration-draw.js';
import { callJson, run, startEmulator } from './harness.js';
import type { OutputData } from './wire.js';

const MINUTE = 60_000;
/** service.md §3.2, §3.3: the service's poll tick. */
const TICK = 1_500;

const CHAIN: WorkflowDefinition = {
  canvasId: 'c-varying',
  nodes: [
    { id: 'node-start', type: 'start' },
    { id: 'node-a', parents: ['node-start'], durationMs: 4 * MINUTE, durationCv: 0.6, messages: [{ content: 'quarter', atMs: MINUTE }, { content: 'end' }] },
    { id: 'node-b', parents: ['node-a'], durationMs: 6 * MINUTE, durationCv: 0.3 },
    { id: 'node-fixed', parents: ['node-b'], durationMs: 5 * MINUTE },
  ],
};

const FAILING: WorkflowDefinition = {
  canvasId: 'c-varying-failure',
  nodes: [{ id: 'node-a', durationMs: 4 * MINUTE, durationCv: 0.6, failure: { kind: 'error', atMs: 2 * MINUTE } }],
};

async function manual(): Promise<{ emulator: Emulator; advance: (ms: number) => void }> {
  const clock = createManualClock();
  const emulator = await startEmulator({ clock, workflows: [CHAIN, FAILING], samples: false });
  return { emulator, advance: (ms) => { clock.advance(ms); } };
}

const view = (emulator: Emulator, executionId: string): ExecutionView => {
  const found = emulator.executions.get(executionId);
  if (found === undefined) throw new Error(`no execution ${executionId}`);
  return found;
};

/** Each task node's duration as the execution view shows it (ended − started). */
const durations = (execution: ExecutionView): Record<string, number | undefined> =>
  Object.fromEntries(
    execution.nodes.filter((node) => node.type === 'task').map((node) => [node.nodeId, node.endedAt === undefined || node.startedAt === undefined ? undefined : node.endedAt - node.startedAt]),
  );

const draw = (nodeId: string, ordinal: number, meanMs: number, cv: number): number => drawDurationMs({ canvasId: 'c-varying', nodeId, ordinal, meanMs, cv });

describe('varying node durations (durationCv)', () => {
  it('give each execution of a canvas its own durations, the same in two emulators that start it in the same order', async () => {
    /** Four runs of the canvas on a fresh emulator, one after another; their node durations. */
    const fourRuns = async (): Promise<Record<string, number | undefined>[]> => {
      const { emulator, advance } = await manual();
      const ids: string[] = [];
      for (let item = 0; item < 4; item += 1) ids.push(await run(emulator, 'c-varying', { variables: { item } }));
      advance(29 * MINUTE);
      return ids.map((id) => durations(view(emulator, id)));
    };
    const seen = [await fourRuns(), await fourRuns()];
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]).toEqual(
      [0, 1, 2, 3].map((ordinal) => ({ 'node-a': draw('node-a', ordinal, 4 * MINUTE, 0.6), 'node-b': draw('node-b', ordinal, 6 * MINUTE, 0.3), 'node-fixed': 5 * MINUTE })),
    );
    expect(new Set(seen[0]?.map((execution) => execution['node-a'])).size).toBe(4);
  });

  it('start a child on the poll tick after its parent ends at its drawn time, and settle the execution on the tick after the last end', async () => {
    const { emulator, advance } = await manual();
    const id = await run(emulator, 'c-varying');
    advance(29 * MINUTE);
    const execution = view(emulator, id);
    const [a, b, fixed] = ['node-a', 'node-b', 'node-fixed'].map((nodeId) => execution.nodes.find((node) => node.nodeId === nodeId));
    // service.md §3.2: on the first tick strictly after the parent's end, ticks every 1.5 s from creation.
    const nextTick = (at: number): number => execution.createdAt + (Math.floor((at - execution.createdAt) / TICK) + 1) * TICK;
    expect(a?.startedAt).toBe(execution.createdAt + TICK);
    expect(a?.endedAt).toBe((a?.startedAt ?? 0) + draw('node-a', 0, 4 * MINUTE, 0.6));
    expect(b?.startedAt).toBe(nextTick(a?.endedAt ?? 0));
    expect(fixed?.startedAt).toBe(nextTick(b?.endedAt ?? 0));
    expect(execution.status).toBe('finish');
    expect(execution.settledAt).toBe(nextTick(fixed?.endedAt ?? 0));
  });

  it('scale message times with the drawn duration: a message scripted a quarter in comes a quarter in, and all show by the node end', async () => {
    const { emulator, advance } = await manual();
    const id = await run(emulator, 'c-varying');
    const drawn = draw('node-a', 0, 4 * MINUTE, 0.6);
    expect(drawn).not.toBe(4 * MINUTE);
    const quarter = Math.round(drawn / 4);
    const contents = async (): Promise<string[] | undefined> => {
      const { body } = await callJson<OutputData>(emulator, `/openapi/workflow/${id}/output`);
      return body.data?.output.find((node) => node.nodeId === 'node-a')?.messages.map((message) => message.content);
    };
    // service.md §3.2: node-a, below the start node, starts on the first poll tick.
    advance(TICK + quarter - 1);
    expect(await contents()).toEqual([]);
    // service.md §4.4: a finished message shows with the next 3 s batch.
    advance(Math.ceil(quarter / 3_000) * 3_000 - (quarter - 1));
    expect(await contents()).toEqual(['quarter']);
    advance(drawn - Math.ceil(quarter / 3_000) * 3_000);
    expect(await contents()).toEqual(['quarter', 'end']);
  });

  it('scale a scripted failure with the drawn duration', async () => {
    const { emulator, advance } = await manual();
    const id = await run(emulator, 'c-varying-failure');
    advance(29 * MINUTE);
    const node = view(emulator, id).nodes[0];
    const drawn = drawDurationMs({ canvasId: 'c-varying-failure', nodeId: 'node-a', ordinal: 0, meanMs: 4 * MINUTE, cv: 0.6 });
    expect(node?.status).toBe('failed');
    expect((node?.endedAt ?? 0) - (node?.startedAt ?? 0)).toBe(Math.round((2 * MINUTE * drawn) / (4 * MINUTE)));
  });
});
