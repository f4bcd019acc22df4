#!/usr/bin/env node
// Builds the `flowstream` command (package.json `bin`) and `npm start` as two self-contained files,
// dist/cli/main.js and dist/cli/start.js, after `tsc` has built the library. The command's own packages
// (commander, log-update, cli-spinners, get-east-asian-width) are bundled in, so they are devDependencies
// and a user of the library alone does not install them; the library's runtime packages
// (`dependencies` and `peerDependencies`) stay imports, shared with the user's own copy.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'));
const shared = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];

await build({
  absWorkingDir: join(import.meta.dirname, '..'),
  entryPoints: ['src/cli/main.ts', 'src/cli/start.ts'],
  outdir: 'dist/cli',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // A package and its subpaths (`rxjs/operators`) alike.
  external: shared.flatMap((name) => [name, `${name}/*`]),
  // Bundled CommonJS packages (commander) call `require` for Node's built-ins, which an ES module lacks.
  banner: { js: "import { createRequire as __flowstreamCreateRequire } from 'node:module';\nconst require = __flowstreamCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
