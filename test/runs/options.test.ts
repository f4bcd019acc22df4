import { asyncScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { OUTPUT_SPACING_MS, type OutputAloneQuestion, outputIsFinal, type OutputQuestion, shouldReadOutput, shouldReadOutputAlone } from '../../src/runs/poll.js';
import { initialView } from '../../src/runs/execution-view.js';
import type { OutputNode } from '../../src/domain/model.js';
import { type RunOptions, runSettings } from '../../src/runs/run-lifecycle.js';
import { runsOver } from '../../src/runs/runs.js';
import { scriptedSource } from './fixtures.js';

const quiet: OutputQuestion = { mode: 'stream', terminal: false, nodes: ['finish', 'init'], sinceLastOutputMs: 10 };
const failedBeside: OutputQuestion['nodes'] = ['failed', 'executing'];

describe('shouldReadOutput after a status read (service.md §2.5)', () => {
  it.each<[string, Partial<OutputQuestion>, boolean]>([
    ['at the end, in stream mode', { terminal: true }, true],
    ['at the end, in final mode', { terminal: true, mode: 'final' }, true],
    ['not at the end when the last output read already holds the final output', { terminal: true, outputFinal: true }, false],
    ['at the end when the last output read did not hold the final output', { terminal: true, outputFinal: false }, true],
    ['never before the end in final mode', { mode: 'final', nodes: failedBeside, sinceLastOutputMs: undefined }, false],
    ['not while a node executes and the next read can be the output alone', { nodes: ['executing'], sinceLastOutputMs: undefined }, false],
    ['while a node executes beside a failed one, when never read', { nodes: failedBeside, sinceLastOutputMs: undefined }, true],
    ['while a node executes beside one of unknown status, once the spacing has passed', { nodes: ['unknown', 'executing'], sinceLastOutputMs: OUTPUT_SPACING_MS }, true],
    ['not within the spacing', { nodes: failedBeside, sinceLastOutputMs: OUTPUT_SPACING_MS - 1 }, false],
    ['not when nothing runs (a node that just ended is read with the next read, or at the end)', {}, false],
  ])('%s', (_name, question, expected) => {
    expect(shouldReadOutput({ ...quiet, ...question })).toBe(expected);
  });
});

describe('outputIsFinal: the last output read holds the run\'s final output (service.md §4.2, §4.4, §4.6)', () => {
  const task = (nodeId: string, status: OutputNode['status']): OutputNode => ({ nodeId, title: nodeId, status, rawStatus: status, messages: [] });
  const view = (outputNodes: readonly OutputNode[], heldFiles: readonly number[] = []) => ({ ...initialView('we-1', 'executing'), outputNodes, heldFiles: new Set(heldFiles) });
  it.each<[string, ReturnType<typeof view>, boolean]>([
    ['when it showed every task node finished', view([task('n1', 'finish'), task('n2', 'finish')]), true],
    ['not when the output was never read', view([]), false],
    ['not while a task node still executes', view([task('n1', 'finish'), task('n2', 'executing')]), false],
    ['not after a task node failed (a failed execution\'s other branches may go on, service.md §3.3)', view([task('n1', 'failed'), task('n2', 'finish')]), false],
    ['not while a file waits for its link', view([task('n1', 'finish')], [0]), false],
  ])('%s', (_name, given, expected) => {
    expect(outputIsFinal(given)).toBe(expected);
  });
});

describe('shouldReadOutputAlone (service.md §4.2, §3.3)', () => {
  const streaming: OutputAloneQuestion = { mode: 'stream', nodes: ['finish', 'executing', 'init'], sinceLastOutputMs: OUTPUT_SPACING_MS, nodeEndedSinceOutput: false };
  it.each<[string, Partial<OutputAloneQuestion>, boolean]>([
    ['while a node executes and the output is due', {}, true],
    ['when the output was never read', { sinceLastOutputMs: undefined }, true],
    ['not within the output spacing', { sinceLastOutputMs: OUTPUT_SPACING_MS - 1 }, false],
    ['within the spacing when a node has ended since the last output read', { sinceLastOutputMs: 1, nodeEndedSinceOutput: true }, true],
    ['not in final mode', { mode: 'final' }, false],
    ['not before the first status read', { nodes: [] }, false],
    ['not when no node executes (every node done: the execution may have turned finish)', { nodes: ['finish', 'finish'] }, false],
    ['not after a node failed (the execution turns failed)', { nodes: ['failed', 'executing'] }, false],
    ['not while a node has a status we do not know', { nodes: ['unknown', 'executing'] }, false],
  ])('%s', (_name, question, expected) => {
    expect(shouldReadOutputAlone({ ...streaming, ...question })).toBe(expected);
  });
});

describe('runSettings', () => {
  it('has the documented defaults', () => {
    expect(runSettings('run')).toEqual({
      bounds: { minMs: 500, maxMs: 10_000 },
      timeoutMs: undefined,
      output: 'stream',
      abortOnUnsubscribe: true,
      failOnWorkflowError: true,
      onFailedBranches: 'leave',
      outageMs: 600_000,
      signal: undefined,
      scheduler: asyncScheduler,
      random: Math.random,
      logger: undefined,
    });
    expect(runSettings('watch').abortOnUnsubscribe).toBe(false);
  });

  it('takes every option, false and 0 included, over the client defaults', () => {
    const signal = new AbortController().signal;
    const random = () => 0.5;
    const settings = runSettings(
      'run',
      { pollInterval: { minMs: 0 }, timeoutMs: 1, output: 'final', abortOnUnsubscribe: false, failOnWorkflowError: false, signal },
      { polling: { minMs: 1000, maxMs: 2000 }, random },
    );
    expect(settings).toMatchObject({ bounds: { minMs: 0, maxMs: 2000 }, timeoutMs: 1, output: 'final', abortOnUnsubscribe: false, failOnWorkflowError: false, signal, random });
    expect(runSettings('watch', { abortOnUnsubscribe: true }).abortOnUnsubscribe).toBe(true);
  });

  it.each<[string, RunOptions, string]>([
    ['a negative wait', { pollInterval: { minMs: -1 } }, 'pollInterval.minMs'],
    ['an unknown onFailedBranches', { onFailedBranches: 'ignore' as 'leave' }, 'onFailedBranches'],
    ['a wait no timer keeps (it would poll in a tight loop)', { pollInterval: { maxMs: 2 ** 31 } }, 'pollInterval.maxMs'],
    ['NaN', { pollInterval: { maxMs: Number.NaN } }, 'pollInterval.maxMs'],
    ['minMs above maxMs', { pollInterval: { minMs: 5000, maxMs: 1000 } }, 'pollInterval'],
    ['a timeout of 0', { timeoutMs: 0 }, 'timeoutMs'],
    ['an infinite timeout (a timer would fire at once)', { timeoutMs: Number.POSITIVE_INFINITY }, 'timeoutMs'],
    ['an output mode that does not exist', { output: 'streaming' as NonNullable<RunOptions['output']> }, 'output'],
    ['a null output mode (only an absent one is the default)', { output: null as unknown as NonNullable<RunOptions['output']> }, 'output'],
    ['a negative outageMs', { outageMs: -1 }, 'outageMs'],
    ['an infinite outageMs', { outageMs: Number.POSITIVE_INFINITY }, 'outageMs'],
    // From plain JavaScript: a wrong type is refused rather than misread.
    ['a signal that is not an AbortSignal', { signal: {} as AbortSignal }, 'signal'],
    ['an AbortController in place of its signal', { signal: new AbortController() as unknown as AbortSignal }, 'signal'],
    ['a detach that is not an AbortSignal', { detach: true as unknown as AbortSignal }, 'detach'],
    ['a pollInterval that is a number', { pollInterval: 500 as unknown as NonNullable<RunOptions['pollInterval']> }, 'pollInterval'],
    ['a null pollInterval', { pollInterval: null as unknown as NonNullable<RunOptions['pollInterval']> }, 'pollInterval'],
    ["abortOnUnsubscribe: 'false' (truthy)", { abortOnUnsubscribe: 'false' as unknown as boolean }, 'abortOnUnsubscribe'],
    ["failOnWorkflowError: 'false' (truthy)", { failOnWorkflowError: 'false' as unknown as boolean }, 'failOnWorkflowError'],
    ["checkVariables: 'true'", { checkVariables: 'true' as unknown as boolean }, 'checkVariables'],
    ['a misspelt pollInterval bound', { pollInterval: { min: 5 } as NonNullable<RunOptions['pollInterval']> }, 'pollInterval.min'],
  ])('refuses %s with an InvalidArgumentError naming the option', (_name, options, argument) => {
    expect(() => runSettings('run', options)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });

  it('takes outageMs from the run, then the client, then the default; 0 included', () => {
    expect(runSettings('run', { outageMs: 0 }, { outageMs: 5_000 }).outageMs).toBe(0);
    expect(runSettings('run', {}, { outageMs: 5_000 }).outageMs).toBe(5_000);
    expect(runSettings('watch').outageMs).toBe(600_000);
  });

  it('refuses a bad client outageMs once, when the runs are made', () => {
    expect(() => runsOver(scriptedSource({}), { outageMs: -5 })).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'outageMs' }));
  });

  it('refuses a bad client polling once, when the runs are made', () => {
    expect(() => runsOver(scriptedSource({}), { polling: { minMs: -5 } })).toThrow(expect.objectContaining({ argument: 'polling.minMs' }));
  });

  it.each([
    ['input', (runs: ReturnType<typeof runsOver>) => runs.run('c-1', null as unknown as undefined)],
    ['options', (runs: ReturnType<typeof runsOver>) => runs.run('c-1', {}, null as unknown as undefined)],
    ['options', (runs: ReturnType<typeof runsOver>) => runs.watch('we-1', null as unknown as undefined)],
  ] as const)('errors a run given null as its %s with InvalidArgumentError, starting nothing', (argument, open) => {
    let started = 0;
    const runs = runsOver(scriptedSource({ start: () => { started += 1; throw new Error('nothing may start'); } }));
    let failure: unknown;
    open(runs).subscribe({ error: (error: unknown) => { failure = error; } });
    expect(failure).toMatchObject({ code: 'INVALID_ARGUMENT', argument });
    expect(started).toBe(0);
  });
});
