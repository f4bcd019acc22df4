import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffLines, unifiedDiff } from '../../src/cli/types-diff.js';

/** Applies a unified diff's hunks to `before` (as `patch` would). */
function patched(before: string, diff: string): string {
  const old = before.split('\n');
  const result: string[] = [];
  let at = 0;
  const lines = diff.split('\n').slice(2);
  for (let index = 0; index < lines.length; index += 1) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(lines[index] ?? '');
    if (header === null) continue;
    const start = Number(header[1]) - (header[2] === '0' ? 0 : 1);
    result.push(...old.slice(at, start));
    at = start;
    for (index += 1; index < lines.length && !(lines[index] ?? '').startsWith('@@'); index += 1) {
      const line = lines[index] ?? '';
      if (line.startsWith('+')) result.push(line.slice(1));
      else if (line.startsWith('-')) at += 1;
      else if (line.startsWith(' ')) {
        result.push(line.slice(1));
        at += 1;
      }
    }
    index -= 1;
  }
  result.push(...old.slice(at));
  return result.join('\n');
}

const texts = fc.array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 30 }).map((lines) => lines.join('\n'));

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', { before: 'x', after: 'y' })).toBe('');
  });

  it('writes hunks with three lines of context, as diff -u does', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'].join('\n');
    const after = before.replace('2', 'two').replace('11', 'eleven');
    expect(unifiedDiff(before, after, { before: 'old', after: 'new' })).toBe(
      ['--- old', '+++ new', '@@ -1,5 +1,5 @@', ' 1', '-2', '+two', ' 3', ' 4', ' 5', '@@ -8,5 +8,5 @@', ' 8', ' 9', ' 10', '-11', '+eleven', ' 12', ''].join('\n'),
    );
  });

  it('property: the diff applied to the old text gives the new one', () => {
    fc.assert(
      fc.property(texts, texts, (before, after) => {
        expect(patched(before, unifiedDiff(before, after, { before: 'a', after: 'b' }))).toBe(after);
      }),
    );
  });

  it('property: a text against itself keeps every line', () => {
    fc.assert(
      fc.property(texts, (text) => {
        const lines = text.split('\n');
        expect(diffLines(lines, lines).every((line) => line.kind === ' ')).toBe(true);
      }),
    );
  });
});
