import { asyncScheduler } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import { normalizeBaseUrl, normalizeOptions } from '../../src/http/options.js';
import type { RequestGate } from '../../src/domain/requests.js';

const base = { apiKey: 'rf_key', baseUrl: 'https://api.example.com/v1' } as const;

function rejects(run: () => unknown, argument: string): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(isInvalidArgumentError(caught)).toBe(true);
  expect((caught as { argument: string }).argument).toBe(argument);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('normalizeOptions', () => {
  it('applies every default', () => {
    const resolved = normalizeOptions(base);
    expect(resolved).toEqual({
      baseUrl: 'https://api.example.com/v1',
      fetch: undefined,
      timeouts: { run: 30_000, abort: 30_000, status: 30_000, output: 30_000, search: 30_000, detail: 30_000, upload: 120_000, copilot: 330_000 },
      retry: { retries: 3, baseDelayMs: 500, maxDelayMs: 10_000, rateLimitWaitMs: 60_000, maxWaitMs: 65_000 },
      headers: {},
      logger: undefined,
      maxResponseBytes: 8 * 1024 * 1024,
      gate: undefined,
      scheduler: asyncScheduler,
    });
    expect(JSON.stringify(resolved)).not.toContain('rf_key');
  });

  it('keeps the copilot default above the service’s 300 s generation time (service.md §2.4)', () => {
    expect(normalizeOptions({ ...base, timeoutMs: 5_000 }).timeouts.copilot).toBeGreaterThan(300_000);
  });

  it('takes every option, 0 included where 0 makes sense', () => {
    const fetch = vi.fn<typeof globalThis.fetch>();
    const logger = { warn: vi.fn() };
    const gate: RequestGate = { acquire: () => Promise.resolve(), report: () => undefined };
    const resolved = normalizeOptions({
      ...base,
      fetch,
      timeoutMs: { default: 1_000, copilot: 2_000, status: 3 },
      retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0, rateLimitWaitMs: 0, maxWaitMs: 0 },
      headers: { 'x-team': 'a' },
      logger,
      maxResponseBytes: 1,
      gate,
    });
    expect(resolved.fetch).toBe(fetch);
    expect(resolved.maxResponseBytes).toBe(1);
    expect(resolved.timeouts).toMatchObject({ copilot: 2_000, status: 3, run: 1_000, upload: 120_000 });
    expect(resolved.retry).toEqual({ retries: 0, baseDelayMs: 0, maxDelayMs: 0, rateLimitWaitMs: 0, maxWaitMs: 0 });
    expect(resolved.headers).toEqual({ 'x-team': 'a' });
    resolved.logger?.warn('hello', { a: 1 });
    expect(logger.warn).toHaveBeenCalledWith('hello', { a: 1 });
    expect(resolved.gate).toBe(gate);
  });

  it('reads retry: false as no retries, a number timeout as the default', () => {
    const resolved = normalizeOptions({ ...base, retry: false, timeoutMs: 7 });
    expect(resolved.retry.retries).toBe(0);
    expect(resolved.timeouts.status).toBe(7);
  });

  it('refuses bad values with the option named', () => {
    rejects(() => normalizeOptions({ ...base, apiKey: '' }), 'apiKey');
    rejects(() => normalizeOptions({ ...base, apiKey: 'rf_a\nb' }), 'apiKey');
    rejects(() => normalizeOptions({ ...base, timeoutMs: 0 }), 'timeoutMs');
    rejects(() => normalizeOptions({ ...base, timeoutMs: { copilot: -1 } }), 'timeoutMs.copilot');
    rejects(() => normalizeOptions({ ...base, timeoutMs: 2 ** 31 }), 'timeoutMs');
    rejects(() => normalizeOptions({ ...base, retry: { retries: 1.5 } }), 'retry.retries');
    rejects(() => normalizeOptions({ ...base, retry: { baseDelayMs: Number.NaN } }), 'retry.baseDelayMs');
  });

  it('refuses a misspelt or mistyped timeoutMs, retry or fetch instead of quietly using the defaults', () => {
    // From JavaScript nothing checks the names: `stauts` would leave status reads at 30 s unsaid.
    rejects(() => normalizeOptions({ ...base, timeoutMs: { stauts: 5_000 } as never }), 'timeoutMs.stauts');
    expect(() => normalizeOptions({ ...base, timeoutMs: { stauts: 5_000 } as never })).toThrow(/did you mean 'status'/);
    rejects(() => normalizeOptions({ ...base, timeoutMs: '5000' as never }), 'timeoutMs');
    rejects(() => normalizeOptions({ ...base, timeoutMs: null as never }), 'timeoutMs');
    rejects(() => normalizeOptions({ ...base, retry: { retry: 0 } as never }), 'retry.retry');
    rejects(() => normalizeOptions({ ...base, retry: true as never }), 'retry');
    rejects(() => normalizeOptions({ ...base, retry: 0 as never }), 'retry');
    rejects(() => normalizeOptions({ ...base, fetch: 'https://proxy' as never }), 'fetch');
    expect(normalizeOptions({ ...base, retry: { retries: 1 }, timeoutMs: { default: 1_000, run: 2_000 } }).timeouts.run).toBe(2_000);
  });

  it('says what was given in place of an option: null, an array, or its type', () => {
    expect(() => normalizeOptions({ ...base, fetch: null as never })).toThrow('(got null)');
    expect(() => normalizeOptions({ ...base, fetch: [] as never })).toThrow('(got an array)');
    expect(() => normalizeOptions({ ...base, fetch: 'https://proxy' as never })).toThrow('(got string)');
    expect(() => normalizeOptions({ ...base, retry: [] as never })).toThrow('(got an array)');
    expect(() => normalizeOptions({ ...base, retry: true as never })).toThrow('(got true)');
    expect(() => normalizeOptions({ ...base, timeoutMs: null as never })).toThrow('(got null)');
  });

  it('refuses headers that would split the request or that fetch would refuse, naming the header', () => {
    rejects(() => normalizeOptions({ ...base, headers: { 'x-team': 'a\r\nx-evil: 1' } }), 'headers.x-team');
    rejects(() => normalizeOptions({ ...base, headers: { 'x-team': 'a\nb' } }), 'headers.x-team');
    rejects(() => normalizeOptions({ ...base, headers: { 'bad name': 'a' } }), 'headers');
    rejects(() => normalizeOptions({ ...base, headers: { 'x-n': 1 as unknown as string } }), 'headers.x-n');
    rejects(() => normalizeOptions({ ...base, headers: null as unknown as Record<string, string> }), 'headers');
  });

  it.each([0, -1, 1.5, Number.NaN, '8'])('refuses maxResponseBytes %j', (value) => {
    rejects(() => normalizeOptions({ ...base, maxResponseBytes: value as number }), 'maxResponseBytes');
  });

  it('keeps a throwing logger from breaking what it reports on', () => {
    const resolved = normalizeOptions({ ...base, logger: { warn: () => { throw new Error('disk full'); }, debug: () => { throw new Error('x'); } } });
    expect(() => resolved.logger?.warn('a')).not.toThrow();
    expect(() => resolved.logger?.debug?.('a')).not.toThrow();
  });

  it.each(['baseDelayMs', 'maxDelayMs', 'rateLimitWaitMs', 'maxWaitMs'] as const)('refuses retry.%s beyond what a timer keeps (it would fire at once)', (name) => {
    rejects(() => normalizeOptions({ ...base, retry: { [name]: 2 ** 31 } }), `retry.${name}`);
    expect(normalizeOptions({ ...base, retry: { [name]: 0 } }).retry[name]).toBe(0);
  });
});

describe('base URL', () => {
  it('tolerates trailing slashes and keeps a path prefix', () => {
    expect(normalizeBaseUrl('http://127.0.0.1:4000/v1///')).toBe('http://127.0.0.1:4000/v1');
    expect(normalizeBaseUrl('https://example.com/api/v1')).toBe('https://example.com/api/v1');
  });

  it.each([
    ['https://example.com', 'must end in /v1'],
    ['https://example.com/v2', 'must end in /v1'],
    ['ftp://example.com/v1', 'http or https'],
    ['not a url', 'is not a URL'],
    ['https://user:pw@example.com/v1', 'credentials'],
    ['https://example.com/v1?x=1', 'query'],
  ])('refuses %s clearly', (url, problem) => {
    expect(() => normalizeBaseUrl(url)).toThrow(problem);
  });

  it('falls back to FLOWSTREAM_BASE_URL, and says so when neither is set', () => {
    vi.stubEnv('FLOWSTREAM_BASE_URL', 'http://127.0.0.1:9/v1/');
    expect(normalizeOptions({ apiKey: 'rf_key' }).baseUrl).toBe('http://127.0.0.1:9/v1');
    vi.stubEnv('FLOWSTREAM_BASE_URL', '');
    expect(() => normalizeOptions({ apiKey: 'rf_key' })).toThrow('FLOWSTREAM_BASE_URL');
  });
});
