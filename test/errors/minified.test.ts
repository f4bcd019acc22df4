import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Errors from '../../src/errors/index.js';

// Users bundle with esbuild or terser, which rename classes: the errors must keep their names and guards.
describe('errors in a minified bundle', () => {
  let directory = '';
  let minified: typeof Errors;

  beforeAll(async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../../src/errors/index.ts', import.meta.url))],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    directory = await mkdtemp(join(tmpdir(), 'flowstream-errors-'));
    const file = join(directory, 'errors.min.mjs');
    await writeFile(file, result.outputFiles[0]!.contents);
    minified = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as typeof Errors;
  });

  afterAll(async () => {
    if (directory !== '') await rm(directory, { recursive: true, force: true });
  });

  it('renames the classes, and the errors keep their names, brands and guards', () => {
    expect(minified.NotFoundError.name).not.toBe('NotFoundError');
    const error = new minified.NotFoundError({ endpoint: 'status', status: 404 });
    expect(error.name).toBe('NotFoundError');
    expect(String(error)).toMatch(/^NotFoundError: /u);
    expect(error[Symbol.for('flowstream.error.kinds') as keyof typeof error]).toEqual(['FlowstreamError', 'ApiError', 'NotFoundError']);
    expect(minified.isNotFoundError(error)).toBe(true);
    expect(minified.isApiError(error)).toBe(true);
    expect(minified.isServerError(error)).toBe(false);
    const timeout = new minified.RunTimeoutError(1_000);
    expect(timeout.name).toBe('RunTimeoutError');
    expect(minified.isRunTimeoutError(timeout)).toBe(true);
    expect(minified.isApiError(timeout)).toBe(false);
  });
});
