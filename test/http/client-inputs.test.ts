import { describe, expect, it, vi } from 'vitest';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import type { HttpClient } from '../../src/http/client.js';
import type { GenerateRequest } from '../../src/http/resources.js';
import type { UploadSource } from '../../src/http/upload-source.js';
import type { Variables } from '../../src/domain/model.js';
import { clientFor } from './support/client.js';

/** A fetch that fails the test if anything is sent. */
function silentClient(): { client: HttpClient; fetch: ReturnType<typeof vi.fn<typeof globalThis.fetch>> } {
  const fetch = vi.fn<typeof globalThis.fetch>(() => Promise.reject(new Error('nothing may be sent')));
  return { client: clientFor('http://127.0.0.1:9', { fetch }), fetch };
}

const cyclic: Record<string, unknown> = {};
cyclic['self'] = cyclic;

const cases: readonly (readonly [string, (client: HttpClient) => Promise<unknown>, string])[] = [
  ['an empty execution id', (c) => c.executions.status(''), 'executionId'],
  ['a blank canvas id', (c) => c.executions.start('  '), 'canvasId'],
  ['a `..` id', (c) => c.executions.output('..'), 'executionId'],
  ['an id with a newline', (c) => c.executions.abort('we-1\n'), 'executionId'],
  ['an id with a control character', (c) => c.workflows.get('c-\u0001'), 'canvasId'],
  ['a non-string id', (c) => c.executions.status(42 as unknown as string), 'executionId'],
  ['variables that are not an object', (c) => c.executions.start('c-1', { variables: ['a'] as unknown as Variables }), 'variables'],
  ['an undefined variable', (c) => c.executions.start('c-1', { variables: { a: undefined } as unknown as Variables }), 'variables.variables.a'],
  ['a function variable', (c) => c.executions.start('c-1', { variables: { a: (() => 1) as unknown as string } }), 'variables.variables.a'],
  ['a bigint variable', (c) => c.executions.start('c-1', { variables: { a: 1n as unknown as number } }), 'variables.variables.a'],
  ['a NaN variable', (c) => c.executions.start('c-1', { variables: { a: Number.NaN } }), 'variables.variables.a'],
  ['a Date variable', (c) => c.executions.start('c-1', { variables: { a: new Date() as unknown as string } }), 'variables.variables.a'],
  ['a cyclic variable', (c) => c.executions.start('c-1', { variables: { a: cyclic as unknown as Variables } }), 'variables.variables.a.self'],
  ['text over 100k characters (E2004)', (c) => c.executions.start('c-1', { variables: { a: 'x'.repeat(100_001) } }), 'variables.variables.a'],
  ['a body over 100 KB (E2005)', (c) => c.executions.start('c-1', { variables: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`v${i}`, 'é'.repeat(2_000)])) }), 'variables'],
  ['an empty copilot query', (c) => c.copilot.generate({ query: '   ' }), 'query'],
  ['a copilot locale that is not a string', (c) => c.copilot.generate({ query: 'q', locale: 42 as unknown as string }), 'locale'],
  ['an empty copilot locale', (c) => c.copilot.generate({ query: 'q', locale: ' ' }), 'locale'],
  ['an empty canvasId', (c) => c.copilot.generate({ query: 'q', canvasId: '' }), 'canvasId'],
  ['zero files', (c) => c.files.upload([]), 'files'],
  ['a Blob without a name', (c) => c.files.upload([new Blob(['x']) as UploadSource]), 'files[0]'],
  ['a file over 50 MiB', (c) => c.files.upload([{ name: 'big.bin', data: new Uint8Array(50 * 1024 * 1024 + 1) }]), 'files[0]'],
  ['a page of 0', (c) => c.workflows.search({ page: 0 }), 'page'],
  ['a page size over 100', (c) => c.workflows.search({ pageSize: 101 }), 'pageSize'],
  ['an unknown order', (c) => c.workflows.search({ order: 'newest' as 'creationAsc' }), 'order'],
  ['a lone surrogate in an execution id', (c) => c.executions.status('we-\ud800'), 'executionId'],
  ['a lone surrogate in a canvas id', (c) => c.workflows.get('c-\udfff-1'), 'canvasId'],
  ['a lone surrogate in a variable', (c) => c.executions.start('c-1', { variables: { a: 'x\ud83d' } }), 'variables.variables.a'],
  ['a lone surrogate in a variable name', (c) => c.executions.start('c-1', { variables: { ['\udc00']: 'x' } }), 'variables.variables.\udc00'],
  ['null as a run input', (c) => c.executions.start('c-1', null as unknown as undefined), 'input'],
  ['null as options', (c) => c.executions.start('c-1', {}, null as unknown as undefined), 'options'],
  ['null as status options', (c) => c.executions.status('we-1', null as unknown as undefined), 'options'],
  ['null as a search query', (c) => c.workflows.search(null as unknown as undefined), 'query'],
  ['null as plan options', (c) => c.workflows.get('c-1', null as unknown as undefined), 'options'],
  ['null as upload options', (c) => c.files.upload([new File(['x'], 'x.txt')], null as unknown as undefined), 'options'],
  ['null as an upload entry', (c) => c.files.upload([null as unknown as File]), 'files[0]'],
  ['null as copilot options', (c) => c.copilot.generate({ query: 'q' }, null as unknown as undefined), 'options'],
  ['null as a copilot request', (c) => c.copilot.generate(null as unknown as GenerateRequest), 'request'],
  ['no copilot request', (c) => (c.copilot.generate as (request?: GenerateRequest) => Promise<unknown>)(), 'request'],
  // Read as nothing, a misspelt key would leave `canvasId` out: a new workflow instead of the one replaced.
  ['a copilot key it does not know', (c) => c.copilot.generate({ query: 'q', replaceCanvasId: 'c-1' } as GenerateRequest), 'request.replaceCanvasId'],
];

/** `{ a: { a: … } }`, `levels` deep, built without recursion. */
function nested(levels: number): Variables {
  let value: Record<string, unknown> = {};
  for (let level = 0; level < levels; level += 1) value = { a: value };
  return value as Variables;
}

describe('a copilot query that is not text', () => {
  it('is refused as not a string, not as empty', async () => {
    const { client } = silentClient();
    const error: unknown = await client.copilot.generate({ query: 42 as unknown as string }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'InvalidArgumentError', argument: 'query', message: 'Invalid query: must be the description of the workflow, a string (got number)' });
  });
});

describe('input no stack can hold, and input that changes while it is read', () => {
  it('refuses variables nested 20,000 levels deep with InvalidArgumentError, not a stack overflow', async () => {
    const { client, fetch } = silentClient();
    const error: unknown = await client.executions.start('c-1', { variables: nested(20_000) }).catch((e: unknown) => e);
    expect(isInvalidArgumentError(error)).toBe(true);
    expect((error as Error).message).toContain('nests deeper than 64 levels');
    expect(fetch).not.toHaveBeenCalled();
  });

  it('accepts ordinary nesting', async () => {
    const fetch = vi.fn<typeof globalThis.fetch>(() => Promise.resolve(Response.json({ success: true, data: { executionId: 'we-1', status: 'running' } })));
    await clientFor('http://127.0.0.1:9', { fetch }).executions.start('c-1', { variables: nested(20) });
    expect(fetch).toHaveBeenCalledOnce();
  });

  it('checks the bytes it sends: a getter that answers longer text once checked is refused', async () => {
    const { client, fetch } = silentClient();
    let reads = 0;
    const variables = {
      get text(): string {
        reads += 1;
        return reads === 1 ? 'short' : 'x'.repeat(100_001);
      },
    };
    const error: unknown = await client.executions.start('c-1', { variables }).catch((e: unknown) => e);
    expect(isInvalidArgumentError(error)).toBe(true);
    expect(error).toMatchObject({ argument: 'variables.variables.text' });
    expect(fetch).not.toHaveBeenCalled();
  });
});

describe('arguments are checked before anything is sent', () => {
  it.each(cases)('refuses %s', async (_label, call, argument) => {
    const { client, fetch } = silentClient();
    const error: unknown = await call(client).catch((e: unknown) => e);
    expect(isInvalidArgumentError(error)).toBe(true);
    expect(error).toMatchObject({ argument, code: 'INVALID_ARGUMENT' });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('accepts exactly 100k characters of text', async () => {
    const fetch = vi.fn<typeof globalThis.fetch>(() => Promise.resolve(Response.json({ success: true, data: { executionId: 'we-1', status: 'running' } })));
    await clientFor('http://127.0.0.1:9', { fetch }).executions.start('c-1', { variables: { a: 'x'.repeat(100_000) } });
    expect(fetch).toHaveBeenCalledOnce();
  });
});

describe('`of_` text variables (service.md §5.5)', () => {
  it('warns about a text that the service will read as a fileKey, but not about keys this client uploaded', async () => {
    const fetch = vi.fn<typeof globalThis.fetch>((input) => {
      const url = input instanceof Request ? input.url : String(input);
      const data = url.endsWith('/upload') ? { files: [{ fileKey: 'of_AAAAAAAAAAAAAAAAAAAAAA', fileName: 'a.txt' }] } : { executionId: 'we-1', status: 'running' };
      return Promise.resolve(Response.json({ success: true, data }));
    });
    const logger = { warn: vi.fn<(message: string, meta?: Readonly<Record<string, unknown>>) => void>() };
    const client = clientFor('http://127.0.0.1:9', { fetch, logger });
    const [file] = await client.files.upload([new File(['x'], 'a.txt')]);
    await client.executions.start('c-1', { variables: { doc: file!.fileKey, docs: [file!.fileKey], note: 'of_course', list: ['of_x'], plain: 'course' } });
    expect(logger.warn.mock.calls.map(([, meta]) => meta)).toEqual([{ variable: 'note' }, { variable: 'list' }]);
    expect(logger.warn.mock.calls[0]?.[0]).toContain('service.md §5.5');
  });
});
