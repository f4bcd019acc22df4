import fc from 'fast-check';
import { EMPTY, NEVER, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import type { PlanVariable, Variables } from '../../src/domain/model.js';
import { runResult } from '../../src/runs/events.js';
import { checkVariablesAgainstPlan, startExecution, type ExecutionSource, type StartProgress } from '../../src/runs/run-lifecycle.js';
import { createClient } from '../../src/client.js';
import { createEmulator } from '../../src/emulator/index.js';

const plan = {
  variables: [
    { name: 'topic', variableType: 'string', required: true },
    { name: 'tone', variableType: 'option', required: false, options: ['formal', 'casual'] },
    { name: 'attachment', variableType: 'resource', required: false },
  ] satisfies PlanVariable[],
};

function refusal(variables: Variables): unknown {
  try {
    checkVariablesAgainstPlan(plan, variables);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('checkVariablesAgainstPlan', () => {
  it('accepts what the plan allows', () => {
    expect(refusal({ topic: 'tides' })).toBeUndefined();
    expect(refusal({ topic: 'tides', tone: 'casual', attachment: 'of_AAAAAAAAAAAAAAAAAAAAAA' })).toBeUndefined();
  });

  it.each([
    [{ topik: 'x', topic: 'y' }, 'variables.topik', 'did you mean `topic`?'],
    [{ Tone: 'formal', topic: 'y' }, 'variables.Tone', 'did you mean `tone`?'],
    [{ colour: 'red', topic: 'y' }, 'variables.colour', 'its variables are `topic`, `tone`, `attachment`'],
    [{}, 'variables.topic', 'is required'],
    [{ topic: '  ' }, 'variables.topic', 'is required'],
    [{ topic: 'x', tone: 'rude' }, 'variables.tone', '"rude" is not one of its options: "formal", "casual"'],
    [{ topic: 42 }, 'variables.topic', 'must be text, not 42'],
    [{ topic: 'x', attachment: 'report.pdf' }, 'variables.attachment', '"report.pdf" is not a file key'],
  ] as const)('refuses %j, naming %s', (variables, argument, message) => {
    const error = refusal(variables);
    expect(isInvalidArgumentError(error)).toBe(true);
    expect(error).toMatchObject({ argument });
    expect((error as Error).message).toContain(message);
  });

  it('property: a name one edit away from a variable is refused with that variable suggested', () => {
    fc.assert(
      fc.property(fc.constantFrom('topic', 'attachment'), fc.nat(), fc.constantFrom('x', 'q', 'z'), (name, at, letter) => {
        const position = at % name.length;
        const misspelt = `${name.slice(0, position)}${letter}${name.slice(position + 1)}`;
        fc.pre(misspelt !== name);
        const error = refusal({ topic: 'x', [misspelt]: 'y' });
        expect((error as Error | undefined)?.message).toContain(`did you mean \`${name}\`?`);
      }),
    );
  });
});

describe('client.run with checkVariables', () => {
  it('errors before anything is started when the variables do not fit the plan, and runs when they do', async () => {
    const emulator = await createEmulator({ speed: 50, rateLimit: false });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });
      const error: unknown = await runResult(client.run('c-sample-variables', { variables: { topik: 'tides' } }, { checkVariables: true })).catch((caught: unknown) => caught);
      expect(isInvalidArgumentError(error)).toBe(true);
      expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
      const handle = client.startRun('c-sample-variables', { variables: { topic: 'tides', tone: 'rude' } }, { checkVariables: true, failOnWorkflowError: false });
      await expect(handle.result).rejects.toMatchObject({ argument: 'variables.tone' });
      expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
      const result = await runResult(client.run('c-sample-variables', { variables: { topic: 'tides', tone: 'casual' } }, { checkVariables: true }));
      expect(result.status).toBe('finish');
      expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(1);
    } finally {
      await emulator.close();
    }
  });
});

describe('startExecution with checkVariables', () => {
  const plan = { variables: [] } as never;
  const source = (planRead: NonNullable<ExecutionSource['plan']>, started: string[]): ExecutionSource => ({
    start: (canvasId) => {
      started.push(canvasId);
      return of({ type: 'started', execution: { executionId: 'we-1' } } as unknown as StartProgress);
    },
    status: () => NEVER,
    output: () => NEVER,
    abort: () => EMPTY,
    plan: planRead,
  });

  it('starts once the plan is read, and ends when the start does, whether the plan read ends before or after', () => {
    new TestScheduler((actual, expected) => { expect(actual).toEqual(expected); }).run(({ cold, expectObservable }) => {
      const started: string[] = [];
      const start = startExecution(source(() => cold('-a|', { a: plan }), started), 'c-1', {}, true);
      expectObservable(start()).toBe('-(s|)', { s: { type: 'started', execution: { executionId: 'we-1' } } });
      const held = startExecution(source(() => cold('-a---', { a: plan }), started), 'c-1', {}, true);
      expectObservable(held()).toBe('-(s|)', { s: { type: 'started', execution: { executionId: 'we-1' } } });
    });
  });

  it('a plan read that ends without a plan ends the start with nothing started, as an empty read does elsewhere', () => {
    new TestScheduler((actual, expected) => { expect(actual).toEqual(expected); }).run(({ cold, expectObservable, flush }) => {
      const started: string[] = [];
      const start = startExecution(source(() => cold('--|'), started), 'c-1', {}, true);
      expectObservable(start()).toBe('--|');
      flush();
      expect(started).toEqual([]);
    });
  });
});
