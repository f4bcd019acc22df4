import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Each entry point of the package lists its exports by name: the public surface at a glance, and
// nothing becomes public by being added to an internal module that an entry re-exports wholesale.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The `src/` module of each subpath of package.json's `exports` (`./dist/x/index.js` → `src/x/index.ts`). */
async function entryPoints(): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | { default: string }> };
  return Object.values(manifest.exports)
    .map((target) => (typeof target === 'string' ? target : target.default))
    .filter((target) => target.startsWith('./dist/'))
    .map((target) => target.replace(/^\.\/dist\//u, 'src/').replace(/\.js$/u, '.ts'));
}

/** The `export * from` and `export type * from` declarations of a module, as written. */
async function wholesaleExports(path: string): Promise<string[]> {
  const source = ts.createSourceFile(path, await readFile(join(ROOT, path), 'utf8'), ts.ScriptTarget.Latest, true);
  return source.statements.filter((statement) => ts.isExportDeclaration(statement) && statement.exportClause === undefined).map((statement) => statement.getText(source));
}

describe('the entry points of the package', () => {
  it('are the core and its subpaths', async () => {
    expect(await entryPoints()).toEqual(expect.arrayContaining(['src/index.ts', 'src/emulator/index.ts', 'src/redis/index.ts', 'src/bullmq/index.ts', 'src/relay/index.ts', 'src/react/index.ts', 'src/otel/index.ts']));
  });

  it('list every export by name, none re-exported wholesale', async () => {
    const found: Record<string, string[]> = {};
    for (const path of await entryPoints()) {
      const wholesale = await wholesaleExports(path);
      if (wholesale.length > 0) found[path] = wholesale;
    }
    expect(found).toEqual({});
  });
});
