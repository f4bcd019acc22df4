import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutToWidth, displayWidth } from '../../src/cli/format/display-width.js';

describe('displayWidth', () => {
  it.each([
    ['abc', 3],
    ['中文字', 6],
    ['한국어', 6],
    ['ｈｉ', 4],
    ['ｱ', 1],
    ['👍🏽x', 3],
    ['👨‍👩‍👧', 2],
    ['🇯🇵', 2],
    ['1️⃣', 2],
    ['e\u0301', 1],
    ['☺', 1],
    ['a\u200bb', 2],
  ])('%s takes %i columns', (text, columns) => {
    expect(displayWidth(text)).toBe(columns);
  });
});

describe('cutToWidth', () => {
  it('leaves text that fits as it is', () => {
    expect(cutToWidth('中文', 4)).toBe('中文');
  });

  it('cuts between characters and marks the cut', () => {
    expect(cutToWidth('中文字符', 6)).toBe('中文…');
    expect(cutToWidth('ab👍🏽cd', 3)).toBe('ab…');
  });

  it('never passes the width, and keeps a prefix of whole characters', () => {
    const text = fc.array(fc.constantFrom('a', '中', '👍🏽', 'e\u0301', '🇯🇵', 'ｈ', ' '), { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 60 }), (line, columns) => {
        const cut = cutToWidth(line, columns);
        expect(displayWidth(cut)).toBeLessThanOrEqual(columns);
        expect(line.startsWith(cut.endsWith('…') && cut !== line ? cut.slice(0, -1) : cut)).toBe(true);
      }),
    );
  });
});
