import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { scrubbedEnv } from '../cli/support/child-process.js';

// What a user or contributor with only the package or a clone can follow. Comments (and the `.d.ts`
// built from them) cite the service's behaviour as `service.md §x.y`, the numbered facts of
// docs/service.md, which the package ships; nothing may point at files outside the repository or at
// an issue tracker they cannot see.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const THIS_FILE = fileURLToPath(import.meta.url);
const run = promisify(execFile);

/** Where a file's text is scanned: every source and doc a user or contributor reads. */
const CITING = ['src', 'test', 'bench', 'examples', 'scripts', 'README.md', 'docs/service.md'];
/** What ships (src/ and the `.d.ts` built from its comments) and what a newcomer reads first. */
const SHIPPED = ['src', 'README.md', 'docs/service.md'];
const TEXT = /\.(?:[cm]?[jt]sx?|md|lua)$/u;

const FORBIDDEN: readonly { readonly what: string; readonly pattern: RegExp }[] = [
  { what: 'the design notes outside the repository', pattern: /\bDESIGN\.md\b/u },
  { what: 'the style notes outside the repository', pattern: /\bSTYLE\.md\b/u },
  { what: 'the protocol notes outside the repository (cite service.md)', pattern: /\bPROTOCOL\b/u },
  { what: 'a path outside the repository', pattern: /\.\.\/shared\b/u },
  { what: 'an issue number', pattern: /\bissues?\s*#?\d+/iu },
  { what: 'an issue number', pattern: /(?:^|[\s(])#\d+(?![\w-])/u },
];

async function filesUnder(entries: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(ROOT, entry);
    if (TEXT.test(entry)) {
      found.push(path);
      continue;
    }
    const names = await readdir(path, { recursive: true });
    for (const name of names) if (TEXT.test(name) && !name.split('/').some((part) => part === 'node_modules' || part === 'dist' || part.startsWith('.'))) found.push(join(path, name));
  }
  return found.filter((file) => file !== THIS_FILE);
}

/** A file's text with comment continuations joined, so that a reference split across lines reads whole. */
function joined(text: string): string {
  return text.replace(/[ \t]*\r?\n[ \t]*(?:\*(?!\/)|\/\/|--)?[ \t]*/gu, ' ');
}

/** The sections docs/service.md has: `## 3. …` gives `3`, `### 3.2 …` gives `3.2`. */
function sectionsOf(markdown: string): Set<string> {
  const sections = new Set<string>();
  for (const match of markdown.matchAll(/^#{2,3} (\d+)(?:\.(\d+))?\.? /gmu)) sections.add(match[2] === undefined ? match[1]! : `${match[1]!}.${match[2]}`);
  return sections;
}

/**
 * The sections a text cites in docs/service.md: every number of `service.md §3.3`, `service.md §1.2–1.3`
 * or `service.md §3.3, §3.5`; in docs/service.md itself, every `§x.y` not the spec's.
 */
function citationsOf(text: string, inServiceDoc: boolean): string[] {
  const number = String.raw`\d+(?:\.\d+)?`;
  const cited: string[] = [];
  const explicit = new RegExp(String.raw`service\.md\s*§(${number})((?:\s*[–-]\s*§?${number}|,\s*§${number})*)`, 'gu');
  for (const match of text.matchAll(explicit)) cited.push(match[1]!, ...(match[2]!.match(new RegExp(number, 'gu')) ?? []));
  if (inServiceDoc) for (const match of text.matchAll(new RegExp(String.raw`(?<!spec |Spec )§(${number})`, 'gu'))) cited.push(match[1]!);
  return cited;
}

describe('references a user or contributor can follow', () => {
  it('names nothing outside the repository and no issue number in src/, the README and docs/service.md', async () => {
    const found: string[] = [];
    for (const file of await filesUnder(SHIPPED)) {
      const text = joined(await readFile(file, 'utf8'));
      for (const { what, pattern } of FORBIDDEN) {
        const match = pattern.exec(text);
        if (match !== null) found.push(`${relative(ROOT, file)}: ${what} ("${match[0].trim()}")`);
      }
    }
    expect(found).toEqual([]);
  });

  it('cites only sections that docs/service.md has', async () => {
    const sections = sectionsOf(await readFile(join(ROOT, 'docs/service.md'), 'utf8'));
    expect(sections.size).toBeGreaterThan(30);
    const unknown: string[] = [];
    let citations = 0;
    for (const file of await filesUnder(CITING)) {
      const cited = citationsOf(joined(await readFile(file, 'utf8')), file.endsWith('docs/service.md'));
      citations += cited.length;
      for (const section of cited) if (!sections.has(section)) unknown.push(`${relative(ROOT, file)}: §${section}`);
    }
    expect(citations).toBeGreaterThan(300);
    expect(unknown).toEqual([]);
  });

  it('ships docs/service.md in the package, beside the declarations that cite it', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, env: scrubbedEnv(), maxBuffer: 16 * 1024 * 1024 });
    const [pack] = JSON.parse(stdout) as { files: { path: string }[] }[];
    expect(pack?.files.map((file) => file.path)).toContain('docs/service.md');
  }, 60_000);
});
