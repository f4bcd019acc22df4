import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * Bundles the progress page into `outdir` (`index.html` and `main.js`). A classic script, not a
 * module: Chromium refuses module scripts from `file://`, and the page should open straight from disk.
 */
export async function bundleProgressPage(outdir: string): Promise<void> {
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: [`${here}main.ts`],
    outfile: `${outdir}/main.js`,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    logLevel: 'silent',
  });
  await copyFile(`${here}index.html`, `${outdir}/index.html`);
}
