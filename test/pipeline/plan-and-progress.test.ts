import { describe, expect, it } from 'vitest';
import { isResumable, withStep } from '../../src/pipeline/pipeline-checkpoint.js';
import { planPipeline } from '../../src/pipeline/pipeline-plan.js';
import { isSettled, nextMoves, type StepPhase } from '../../src/pipeline/pipeline-progress.js';

type Step = 'a' | 'b' | 'c' | 'd';
const plan = planPipeline<Step>({ d: { dependsOn: ['b', 'c'] }, c: { dependsOn: ['a'] }, b: { dependsOn: ['a'] }, a: {} });
const phases = (entries: Partial<Record<Step, StepPhase>>): Map<Step, StepPhase> =>
  new Map((['a', 'b', 'c', 'd'] as const).map((step) => [step, entries[step] ?? 'waiting']));

describe('planPipeline', () => {
  it('orders steps after their dependencies, declaration order among equals', () => {
    expect(plan.order).toEqual(['a', 'b', 'c', 'd']);
    expect(planPipeline({ x: {}, y: {} }).order).toEqual(['x', 'y']);
  });

  it('refuses an empty pipeline, unknown dependencies and cycles, naming the step', () => {
    expect(() => planPipeline({})).toThrow(/at least one step/);
    expect(() => planPipeline<string>({ a: { dependsOn: ['nope'] } })).toThrow(/steps\.a\.dependsOn: unknown step "nope"/);
    expect(() => planPipeline({ a: { dependsOn: ['b'] }, b: { dependsOn: ['c'] }, c: { dependsOn: ['a'] } })).toThrow(/cycle a → b → c → a/);
    expect(() => planPipeline({ a: { dependsOn: ['a'] } })).toThrow(/cycle a → a/);
  });
});

describe('nextMoves', () => {
  it('starts the roots, then each step once all its dependencies finished', () => {
    expect(nextMoves(plan, phases({}), new Set(), undefined)).toEqual({ start: ['a'], skip: [] });
    expect(nextMoves(plan, phases({ a: 'finish' }), new Set(), undefined)).toEqual({ start: ['b', 'c'], skip: [] });
    expect(nextMoves(plan, phases({ a: 'finish', b: 'finish', c: 'running' }), new Set(), undefined)).toEqual({ start: [], skip: [] });
    expect(nextMoves(plan, phases({ a: 'finish', b: 'finish', c: 'finish' }), new Set(), undefined)).toEqual({ start: ['d'], skip: [] });
  });

  it('skips the dependants of a failed, aborted or skipped step, transitively', () => {
    expect(nextMoves(plan, phases({ a: 'failed' }), new Set(), undefined).skip).toEqual([['b', 'a'], ['c', 'a'], ['d', 'b']]);
    expect(nextMoves(plan, phases({ a: 'finish', b: 'aborted', c: 'running' }), new Set(), undefined)).toEqual({ start: [], skip: [['d', 'b']] });
  });

  it('starts an attached (resumed) step at once, and skips every waiting step once stopped', () => {
    expect(nextMoves(plan, phases({}), new Set<Step>(['c']), undefined).start).toEqual(['a', 'c']);
    expect(nextMoves(plan, phases({ a: 'finish', b: 'failed', c: 'aborted' }), new Set(), 'b').skip).toEqual([['d', 'b']]);
    expect(nextMoves(plan, phases({}), new Set(), 'a').skip).toEqual([['a', 'a'], ['b', 'a'], ['c', 'a'], ['d', 'a']]);
  });

  it('is settled when nothing waits or runs', () => {
    expect(isSettled(phases({ a: 'finish', b: 'failed', c: 'aborted', d: 'skipped' }))).toBe(true);
    expect(isSettled(phases({ a: 'finish', b: 'failed', c: 'running', d: 'skipped' }))).toBe(false);
    expect(isSettled(phases({ a: 'finish' }))).toBe(false);
  });
});

describe('checkpoints', () => {
  it('re-attaches to running and finished executions only', () => {
    expect(isResumable({ executionId: 'we-1', status: 'running' })).toBe(true);
    expect(isResumable({ executionId: 'we-1', status: 'finish' })).toBe(true);
    expect(isResumable({ executionId: 'we-1', status: 'failed' })).toBe(false);
    expect(isResumable({ executionId: 'we-1', status: 'aborted' })).toBe(false);
    expect(isResumable(undefined)).toBe(false);
  });

  it('makes a new checkpoint for each change and survives JSON', () => {
    const before = { steps: { a: { executionId: 'we-1', status: 'running' as const } } };
    const after = withStep<string>(before, 'a', { executionId: 'we-1', status: 'finish' });
    expect(before.steps.a.status).toBe('running');
    expect(JSON.parse(JSON.stringify(after))).toEqual({ steps: { a: { executionId: 'we-1', status: 'finish' } } });
  });
});
