import { describe, expect, it } from 'vitest';
import { executedFiles, filesExecutedReport, measureFilesExecuted } from '../../bench/files-executed.js';

const src = (path: string): string => new URL(`../../src/${path}`, import.meta.url).href;

/** One function's coverage: its whole range and how often it ran. */
const fn = (functionName: string, startOffset: number, count: number) => ({ functionName, ranges: [{ startOffset, endOffset: startOffset + 10, count }] });

describe('files executed', () => {
  it('counts a file when a function of it ran, not its top level, and never the emulator', () => {
    const scripts = [
      { url: src('http/transport.ts'), functions: [fn('', 0, 1), fn('send', 20, 2), fn('', 40, 1), fn('idle', 60, 0)] },
      // Only the module's top level ran (a module first imported in the window), or tsx's helper.
      { url: src('http/late.ts'), functions: [fn('', 0, 1), fn('__name', 5, 3), fn('unused', 30, 0)] },
      { url: src('emulator/handlers/run.ts'), functions: [fn('', 0, 0), fn('handleRun', 10, 1)] },
      { url: 'file:///elsewhere/node_modules/ky/distribution/core/Ky.js', functions: [fn('', 0, 0), fn('create', 10, 1)] },
      { url: 'node:internal/url', functions: [fn('', 0, 0), fn('parse', 10, 1)] },
    ];

    expect(executedFiles(scripts, 'src')).toEqual([{ file: 'src/http/transport.ts', functions: ['(anonymous)', 'send'] }]);
    expect(executedFiles(scripts, 'ky')).toEqual([{ file: 'distribution/core/Ky.js', functions: ['create'] }]);
  });

  it('measures a run, a plain call and ky alone, each in a process of its own', { timeout: 90_000 }, async () => {
    const results = await measureFilesExecuted(['run', 'workflows.get', 'ky, one retry']);
    const [run, get, ky] = results.scenarios;

    for (const { src: files } of [run!, get!]) {
      expect(files.files).toBeGreaterThan(0);
      expect(files.executed).toHaveLength(files.files);
      for (const { file, functions } of files.executed) {
        expect(file).toMatch(/^src\/(?!emulator\/).+\.ts$/);
        expect(functions.length).toBeGreaterThan(0);
      }
    }
    // A run makes calls: every file of the plain call's transport runs in it too.
    expect(run!.src.executed.map(({ file }) => file)).toEqual(expect.arrayContaining(['src/http/transport.ts']));
    expect(run!.src.files).toBeGreaterThan(get!.src.files);
    // A run without an idempotency key runs none of the keyed path.
    expect(run!.src.executed.map(({ file }) => file)).not.toContain('src/runs/idempotency.ts');
    // Set-up excluded: the client was created before the window.
    expect(get!.src.executed.map(({ file }) => file)).not.toContain('src/client.ts');
    // The request path is local: outside the budget, a plain call runs a handful of files (the
    // transport's stages, the resource, its schema, the key's redaction, the argument checks, the
    // endpoint table, and the options the budget reads), not one per step.
    expect(get!.src.executed.filter(({ file }) => !file.startsWith('src/budget/')).map(({ file }) => file).length).toBeLessThanOrEqual(7);
    expect(ky!.src.files).toBe(0);
    expect(ky!.ky.files).toBeGreaterThan(0);
    expect(filesExecutedReport(results)).toContain('src/http/transport.ts');
  });
});
