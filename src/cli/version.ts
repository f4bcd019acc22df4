import { readFileSync } from 'node:fs';

/**
 * The package's version, read from its package.json (two folders up, from `src/cli` and `dist/cli`
 * alike), so `--version` never disagrees with what npm installed.
 */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { readonly version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}
