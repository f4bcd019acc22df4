import { setFlagsFromString } from 'node:v8';
import { VirtualTimeScheduler } from 'rxjs';
import { expect, it } from 'vitest';
import type { RunEvent } from '../../src/runs/events.js';
import { RunReader, type RunState, RunStateFold } from '../../src/runs/run-state.js';

setFlagsFromString('--allow-natives-syntax');
// Whether V8 gives two objects one hidden class (their shape, shared, or one each).
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- V8's intrinsic parses only in code compiled after the flag.
const sameShape = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

/** The state after one read of a run of this client, its nodes at work for 5 ms. */
function stateOfRun(executionId: string): RunState {
  const scheduler = new VirtualTimeScheduler();
  const reader = new RunReader(scheduler);
  reader.read([
    { type: 'started', executionId, canvasId: 'c-1', status: 'executing' },
    { type: 'node', executionId, nodeId: 'a', status: 'executing', title: 'Search' },
    { type: 'node', executionId, nodeId: 'b', status: 'executing', title: 'Read' },
  ] satisfies RunEvent[]);
  scheduler.schedule(() => undefined, 5);
  scheduler.flush();
  return reader.read([{ type: 'node', executionId, nodeId: 'c', status: 'init', title: 'Summarise' }]).state;
}

it('the states of many runs share their shapes: a watched run holds no hidden class of its own', () => {
  const states = Array.from({ length: 50 }, (_, n) => stateOfRun(`we-${n}`));
  const [first, last] = [states[0]!, states.at(-1)!];
  expect(last.nodes.map((node) => node.elapsedMs)).toEqual([5, 5, undefined]);
  expect(sameShape(first, last)).toBe(true);
  expect(last.nodes.map((node, index) => sameShape(first.nodes[index]!, node))).toEqual([true, true, true]);
});

it('the folded states of many event streams share their shape', () => {
  const states = Array.from({ length: 50 }, (_, n) => {
    const fold = new RunStateFold();
    fold.apply({ type: 'started', executionId: `we-${n}`, canvasId: 'c-1', status: 'executing' });
    fold.apply({ type: 'node', executionId: `we-${n}`, nodeId: 'a', status: 'executing', title: 'Search' });
    return fold.state;
  });
  expect(sameShape(states[0]!, states.at(-1)!)).toBe(true);
});
