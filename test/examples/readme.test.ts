import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scrubbedEnv, startProcess } from '../cli/support/child-process.js';

// The README's quick start, as a newcomer pastes it: its first TypeScript block, run with the package
// names pointed at this checkout's sources.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the README quick start', () => {
  it('runs offline on the emulator, to a finished result', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const code = /```ts\n([\s\S]*?)```/u.exec(readme)?.[1] ?? '';
    expect(code).toContain("from 'flowstream/emulator'");
    const source = code.replace("from 'flowstream/emulator'", `from '${join(ROOT, 'src/emulator/index.ts')}'`).replace("from 'flowstream'", `from '${join(ROOT, 'src/index.ts')}'`);
    const dir = await mkdtemp(join(ROOT, 'test/examples/.quick-start-'));
    try {
      await writeFile(join(dir, 'quick-start.ts'), source);
      const run = startProcess(process.execPath, ['--import', 'tsx', join(dir, 'quick-start.ts')], { env: scrubbedEnv(), cwd: ROOT });
      expect(await run.exited(60_000)).toBe(0);
      expect(run.stdout()).toMatch(/^started we-/mu);
      expect(run.stdout()).toMatch(/^finished we-/mu);
      expect(run.stdout()).toMatch(/^finish \[/mu);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
