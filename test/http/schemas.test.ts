import { describe, expect, it } from 'vitest';
import en from 'zod/v4/locales/en.js';
import { createRedactor } from '../../src/http/key-redaction.js';
import {
  executionOutputSchema,
  generatedWorkflowSchema,
  parseContext,
  parseNodeError,
  snapshotDataSchema,
  startedExecutionSchema,
  withRequestedId,
  workflowPlanSchema,
  workflowSummariesSchema,
  type DataSchema,
} from '../../src/http/schemas.js';
import { unwrap } from '../../src/http/transport.js';

/** What `schema` reads from `data`; its issues thrown when `data` does not match. */
function parse<T>(schema: DataSchema<T>, data: unknown): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw parsed.error;
  return parsed.data;
}

describe('lenient schemas where the service is loose', () => {
  it('reads the start answer’s `running` as executing, keeping the raw value (service.md §3.1)', () => {
    expect(parse(startedExecutionSchema, { executionId: 'we-1', status: 'running' })).toEqual({ executionId: 'we-1', status: 'executing', rawStatus: 'running' });
  });

  it('keeps unknown statuses visible instead of failing a poll', () => {
    const snapshot = withRequestedId(parse(snapshotDataSchema, { status: 'paused', nodeExecutions: [{ nodeId: 'n', status: 'skipped', extra: 1 }] }), 'we-1');
    expect(snapshot).toEqual({ executionId: 'we-1', status: 'unknown', rawStatus: 'paused', nodes: [{ nodeId: 'n', status: 'unknown', rawStatus: 'skipped' }] });
  });

  it('accepts the spec’s `init` and `waiting` that the service never sends', () => {
    const snapshot = withRequestedId(parse(snapshotDataSchema, { executionId: 'we-1', status: 'init', createdAt: '2026-01-01T00:00:00Z', nodeExecutions: [{ nodeId: 'n', status: 'waiting', title: 'T' }] }), 'we-1');
    expect(snapshot).toMatchObject({ status: 'init', createdAt: '2026-01-01T00:00:00Z', nodes: [{ status: 'waiting', title: 'T' }] });
  });

  it('reads null where the spec says string, and missing lists as empty (service.md §4.2, §4.5)', () => {
    const output = parse(executionOutputSchema, {
      output: [{ nodeId: 'n', title: null, status: 'finish', errorMessage: null, messages: [{ messageId: 'm', type: 'ai', content: 'hi', reasoningContent: null }] }, { nodeId: 'p', status: 'init' }],
      files: [{ name: 'a.md', type: 'text/markdown', size: 3, url: 'http://x/a.md', nodeId: null }],
    });
    expect(output).toEqual({
      output: [
        { nodeId: 'n', status: 'finish', rawStatus: 'finish', messages: [{ messageId: 'm', type: 'ai', rawType: 'ai', content: 'hi', reasoningContent: '' }] },
        { nodeId: 'p', status: 'init', rawStatus: 'init', messages: [] },
      ],
      files: [{ name: 'a.md', type: 'text/markdown', size: 3, url: 'http://x/a.md' }],
    });
    expect(parse(executionOutputSchema, {})).toEqual({ output: [], files: [] });
  });

  it('defaults dependentTasks to [] and required to false (service.md §5.2), and names untitled workflows', () => {
    const plan = parse(workflowPlanSchema, { title: 'P', tasks: [{ id: 't', title: 'T', prompt: 'do', toolsets: [] }], variables: [{ name: 'v', variableType: 'weird' }] });
    expect(plan).toEqual({ title: 'P', tasks: [{ id: 't', title: 'T', prompt: 'do', toolsets: [], dependentTasks: [] }], variables: [{ name: 'v', required: false }] });
    expect(parse(workflowSummariesSchema, [{ canvasId: 'c', title: null }])).toEqual([{ canvasId: 'c', title: 'Untitled' }]);
  });
});

describe('strict where it matters', () => {
  it('refuses a start answer without an execution id', () => {
    expect(startedExecutionSchema.safeParse({ status: 'running' }).success).toBe(false);
  });

  it('refuses nodes without ids and plans without tasks', () => {
    expect(snapshotDataSchema.safeParse({ nodeExecutions: [{ status: 'finish' }] }).success).toBe(false);
    expect(workflowPlanSchema.safeParse({ title: 'x' }).success).toBe(false);
  });
});

describe('parseNodeError (service.md §4.3)', () => {
  it.each([
    ['[]', undefined],
    ['', undefined],
    [null, undefined],
    ['["Request timeout. Please try again later."]', { message: 'Request timeout. Please try again later.', messages: ['Request timeout. Please try again later.'] }],
    ['["a","b"]', { message: 'a; b', messages: ['a', 'b'] }],
    ['Workflow aborted by user', { message: 'Workflow aborted by user', messages: ['Workflow aborted by user'] }],
    ['[not json', { message: '[not json', messages: ['[not json'] }],
  ])('%s', (raw, expected) => {
    const error = parseNodeError(raw);
    expect(error === undefined ? undefined : { message: error.message, messages: error.messages }).toEqual(expected);
    if (error !== undefined) expect(error.raw).toBe(raw);
  });
});

describe('parseNodeError against a hostile server', () => {
  it('keeps an errorMessage nested 20,000 arrays deep as its raw text, without overflowing the stack', () => {
    const raw = `[${'['.repeat(20_000)}"deep"${']'.repeat(20_000)}]`;
    const error = parseNodeError(raw);
    expect(error).toEqual({ message: raw, messages: [raw], raw });
  });

  it('still shows a shallow non-string entry as JSON', () => {
    expect(parseNodeError('["timeout", {"code": 7}]')?.messages).toEqual(['timeout', '{"code":7}']);
  });
});

describe('what a ResponseValidationError says', () => {
  const redact = createRedactor('rf_nothing-to-hide-here-0123456789');

  it('names each issue\'s path and says in English what was expected', () => {
    const text = JSON.stringify({ success: true, data: { nodeExecutions: [{ status: 'finish' }], executionId: 7 } });
    expect(() => unwrap({ status: 200, text, rateLimit: {} }, { endpoint: 'status', schema: snapshotDataSchema }, redact)).toThrow(
      expect.objectContaining({
        reason: 'schema',
        issues: [
          { path: ['data', 'executionId'], message: 'Invalid input: expected string, received number', code: 'invalid_type' },
          { path: ['data', 'nodeExecutions', 0, 'nodeId'], message: 'Invalid input: expected string, received undefined', code: 'invalid_type' },
        ],
      }),
    );
  });

  it('words every issue of the client\'s schemas as zod\'s English locale does, without carrying the locale', () => {
    const answers = [{ canvasId: 7 }, { canvasId: null }, { canvasId: [] }, { canvasId: Number.NaN }, { canvasId: new Date(0) }, { canvasId: 1n }, { canvasId: '' }, { canvasId: 'c-1', workflowPlan: 'x' }, {}];
    const words = en().localeError;
    for (const answer of answers) {
      const ours = generatedWorkflowSchema.safeParse(answer, parseContext);
      const zods = generatedWorkflowSchema.safeParse(answer, { error: words });
      expect(ours.success).toBe(false);
      expect(ours.error?.issues).toEqual(zods.error?.issues);
    }
    expect(parseContext.error?.({ code: 'invalid_value', values: ['a', 'b'], input: 'c' } as never)).toBe(words({ code: 'invalid_value', values: ['a', 'b'], input: 'c' } as never));
    expect(parseContext.error?.({ code: 'invalid_value', values: [1], input: 2 } as never)).toBe(words({ code: 'invalid_value', values: [1], input: 2 } as never));
  });

  it('drops an unknown variable type instead of failing the plan', () => {
    expect(parse(workflowPlanSchema, { title: 'T', tasks: [], variables: [{ name: 'x', variableType: 'colour' }, { name: 'y', variableType: 'option' }] }).variables).toEqual([
      { name: 'x', required: false },
      { name: 'y', variableType: 'option', required: false },
    ]);
  });
});
