import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Scripts bundled to plain JavaScript: `node <paths[name]>` runs the entry point `name`. */
export interface BundledScripts<Name extends string> {
  readonly paths: Readonly<Record<Name, string>>;
  /** Removes the bundles. */
  readonly close: () => Promise<void>;
}

/**
 * Bundles the TypeScript entry points a test spawns as processes of their own (`{ name: path from the
 * repository root }`), once, with esbuild, as tsx compiles them: each process then starts from
 * JavaScript, in about a third of the CPU time that compiling the library's sources again with
 * `--import tsx` takes. Packages stay imports: the bundles are written inside the repository's
 * node_modules, where Node finds them.
 */
export async function bundleScripts<Name extends string>(entryPoints: Readonly<Record<Name, string>>): Promise<BundledScripts<Name>> {
  const cache = join(ROOT, 'node_modules', '.cache');
  await mkdir(cache, { recursive: true });
  const outdir = await mkdtemp(join(cache, 'flowstream-scripts-'));
  await build({
    absWorkingDir: ROOT,
    entryPoints: { ...entryPoints },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  const names = Object.keys(entryPoints) as Name[];
  const paths = Object.fromEntries(names.map((name) => [name, join(outdir, `${name}.mjs`)])) as Record<Name, string>;
  return { paths, close: () => rm(outdir, { recursive: true, force: true }) };
}
