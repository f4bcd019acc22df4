import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { TYPED_WORKFLOWS } from './typed-workflows.js';
import { type PipedRun, runPiped } from '../cli/support/piped-cli.js';

/** The module the type tests compile against, as `flowstream types` wrote it. */
const GENERATED = fileURLToPath(new URL('./workflows.generated.ts', import.meta.url));
/** How the fixture was written: every workflow of the emulator below, augmenting the sources. */
const FIXTURE_FLAGS = ['--module', '../../src/index.js'];

let emulator: Emulator;
let scratch: string;

beforeAll(async () => {
  [emulator, scratch] = await Promise.all([createEmulator({ samples: false, workflows: TYPED_WORKFLOWS, rateLimit: false }), mkdtemp(join(tmpdir(), 'flowstream-types-'))]);
});

afterAll(async () => {
  await Promise.all([emulator.close(), rm(scratch, { recursive: true, force: true })]);
});

/** Runs `flowstream types …` in this process against the emulator: its exit code, stdout and stderr. */
function types(args: readonly string[]): Promise<PipedRun> {
  return runPiped(['types', ...args], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
}

describe('flowstream types', () => {
  it('--check exits 0 when the type tests\' module is what the plans give now', async () => {
    const result = await types(['--out', GENERATED, '--check', ...FIXTURE_FLAGS]);
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('--check takes a checkout\'s CRLF line ends for the same file', async () => {
    const crlf = join(scratch, 'crlf.ts');
    await writeFile(crlf, (await readFile(GENERATED, 'utf8')).replaceAll('\n', '\r\n'));
    expect((await types(['--out', crlf, '--check', ...FIXTURE_FLAGS])).code).toBe(0);
  });

  it('writes the same module for the same plans, every workflow of the account or the ids given', async () => {
    const out = join(scratch, 'workflows.ts');
    expect((await types(['--out', out, ...FIXTURE_FLAGS])).code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(await readFile(GENERATED, 'utf8'));
    const some = await types(['c-typed-translate', 'c-typed-empty', 'c-typed-translate']);
    expect(some.code).toBe(0);
    expect(some.stdout).toContain("declare module 'flowstream' {");
    expect(some.stdout).toContain('`npx flowstream types c-typed-empty c-typed-translate --out <this file>`');
    expect(some.stdout.indexOf("'c-typed-empty'")).toBeLessThan(some.stdout.indexOf("'c-typed-translate'"));
    expect(some.stdout).not.toContain('c-typed-brief');
  });

  it('--check exits 1 with a unified diff and a hint once a plan changed', async () => {
    const out = join(scratch, 'changed.ts');
    expect((await types(['--out', out])).code).toBe(0);
    const translate = TYPED_WORKFLOWS.find((workflow) => workflow.canvasId === 'c-typed-translate');
    if (translate === undefined) throw new Error('no c-typed-translate');
    emulator.workflows.remove('c-typed-translate');
    try {
      emulator.workflows.add({ ...translate, variables: [{ name: 'language', variableType: 'option', options: ['fr', 'de', 'es'], required: true }] });
      const result = await types(['--out', out, '--check']);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`--- ${out}\n+++ ${out} (from the plans now)\n@@ `);
      expect(result.stdout).toContain("\n-      readonly language: 'fr' | 'de';\n-      readonly text?: string;\n+      readonly language: 'fr' | 'de' | 'es';\n");
      expect(result.stderr).toBe(`${out} is out of date with the workflows' plans: run \`flowstream types --out ${out}\` to regenerate it.\n`);
      expect(await readFile(out, 'utf8')).not.toContain("'es'");
    } finally {
      emulator.workflows.remove('c-typed-translate');
      emulator.workflows.add(translate);
    }
  });

  it('--check exits 1 when the file is not there, and a bad command line is a usage error (2)', async () => {
    const missing = await types(['--out', join(scratch, 'none.ts'), '--check']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('(missing)');
    expect(await types(['--check'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--check compares with the file of --out') as unknown });
    expect((await types(['--out'])).code).toBe(2);
    expect((await types(['--bogus'])).code).toBe(2);
    expect(await types(['--out', join(scratch, 'no-such-folder', 'types.ts')])).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot write --out') as unknown });
    await writeFile(join(scratch, 'keep.ts'), 'mine\n');
    expect((await types(['c-typed-nope', '--out', join(scratch, 'keep.ts')])).code).toBe(3);
    expect(await readFile(join(scratch, 'keep.ts'), 'utf8')).toBe('mine\n');
  });

  it('names the workflow, of several, whose plan was not found', async () => {
    const result = await types(['c-typed-translate', 'c-typed-nope', 'c-typed-brief']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('Error: The workflow c-typed-nope was not found (E1000).');
  });
});
