import { describe, expect, it } from 'vitest';
import { runResult, runStore, toRunState } from '../../src/index.js';

describe('run helpers given what is not theirs', () => {
  it.each<[string, () => unknown, string]>([
    ['runResult(null)', () => runResult(null as never), 'source'],
    ['runResult of a Promise', () => runResult(Promise.resolve() as never), 'source'],
    ['runStore(null)', () => runStore(null as never), 'run$'],
    ['runStore of a run handle instead of its events', () => runStore({ executionId: Promise.resolve('we-1') } as never), 'run$'],
    ['toRunState(null)', () => toRunState(null as never), 'options'],
    ['toRunState with a scheduler that is not one', () => toRunState({ scheduler: {} as never }), 'scheduler'],
  ])('refuses %s with InvalidArgumentError naming the argument, not a TypeError', (_name, call, argument) => {
    expect(call).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });
});
