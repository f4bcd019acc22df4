#!/usr/bin/env node
// Writes src/http/package-version.ts from package.json's version, so that the User-Agent the client
// sends names the version installed, without the browser-safe core reading any file at run time. Run
// by `npm run build` and by `npm version` (the `version` script), which commits the file with the bump;
// test/http/package-version.test.ts fails when the two disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const target = join(root, 'src', 'http', 'package-version.ts');
const text = `// Generated from package.json by scripts/package-version.mjs (npm run build, npm version): do not edit.

/** This package's version, as its package.json says. */
export const PACKAGE_VERSION = '${version}';
`;
let current = '';
try {
  current = readFileSync(target, 'utf8');
} catch {
  // Not there yet: written below.
}
if (current !== text) writeFileSync(target, text);
