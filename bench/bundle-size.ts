/**
 * The size a browser app pays for flowstream: a minimal import (`createClient`) bundled as an app's
 * bundler would (esbuild, minified, for the browser), gzipped, and what each package adds. Measured
 * twice: with the default export conditions (what Vite and webpack resolve: rxjs's esm5 build, with
 * tslib) and with `es2015` (rxjs's modern build, which some bundlers choose).
 */
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { table } from './harness/report.js';

const ENTRY = `export { createClient } from ${JSON.stringify(fileURLToPath(new URL('../src/index.ts', import.meta.url)))};`;

/** One measured bundle. */
export interface BundleSize {
  readonly conditions: string;
  readonly minifiedBytes: number;
  readonly gzippedBytes: number;
  /** Minified bytes per package (`flowstream` for the project's own code), largest first. */
  readonly byPackage: readonly { readonly name: string; readonly bytes: number }[];
  /** Every module with bytes in the bundle (paths inside `node_modules/` from the package on, the project's own from `src/`), largest first. */
  readonly modules: readonly { readonly path: string; readonly bytes: number }[];
}

function packageOf(path: string): string {
  const [, inside] = path.split('node_modules/');
  if (inside === undefined) return 'flowstream';
  const parts = inside.split('/');
  return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? inside);
}

function modulePath(path: string): string {
  const [, inside] = path.split('node_modules/');
  if (inside !== undefined) return inside;
  const at = path.lastIndexOf('src/');
  return at < 0 ? path : path.slice(at);
}

/** Bundles the minimal import in memory and measures it. */
export async function bundleSize(conditions: readonly string[] = []): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: ENTRY, loader: 'ts', resolveDir: fileURLToPath(new URL('.', import.meta.url)) },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: [...conditions],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  const [meta] = Object.values(result.metafile.outputs);
  if (output === undefined || meta === undefined) throw new Error('esbuild wrote no bundle');
  const totals = new Map<string, number>();
  for (const [path, input] of Object.entries(meta.inputs)) totals.set(packageOf(path), (totals.get(packageOf(path)) ?? 0) + input.bytesInOutput);
  return {
    conditions: conditions.length === 0 ? 'default' : conditions.join(', '),
    minifiedBytes: output.contents.byteLength,
    gzippedBytes: gzipSync(output.contents, { level: 9 }).byteLength,
    byPackage: [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes),
    modules: Object.entries(meta.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([path, input]) => ({ path: modulePath(path), bytes: input.bytesInOutput }))
      .sort((a, b) => b.bytes - a.bytes),
  };
}

export const BUNDLE_SIZE_HEADERS = ['conditions', 'minified KB', 'gzipped KB', 'largest parts (minified KB)'] as const;

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

export function bundleSizeTable(rows: readonly BundleSize[]): string {
  return table(
    BUNDLE_SIZE_HEADERS,
    rows.map((row) => [row.conditions, kb(row.minifiedBytes), kb(row.gzippedBytes), row.byPackage.slice(0, 4).map((part) => `${part.name} ${kb(part.bytes)}`).join(', ')]),
  );
}
