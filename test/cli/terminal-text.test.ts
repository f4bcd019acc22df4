import { describe, expect, it } from 'vitest';
import { terminalSafe, terminalText } from '../../src/cli/format/terminal-text.js';

describe('terminalText', () => {
  it.each([
    ['an OSC 52 clipboard write ended by BEL', 'a\u001b]52;c;ZXZpbA==\u0007b', 'ab'],
    ['an OSC title ended by ST', 'a\u001b]0;pwned\u001b\\b', 'ab'],
    ['a CSI screen erase and cursor move', 'a\u001b[2J\u001b[1;1Hb', 'ab'],
    ['a colour', 'a\u001b[31mb\u001b[0m', 'ab'],
    ['a C1 CSI', 'a\u009b31mb', 'ab'],
    ['a DCS string', 'a\u001bPq#0;2;0;0;0\u001b\\b', 'ab'],
    ['a bare ESC and BEL', 'a\u001b\u0007b', 'ab'],
    ['bidi overrides', 'a\u202eb\u2066c', 'abc'],
    ['a carriage return that would overwrite the line', 'safe\rEVIL', 'safeEVIL'],
  ])('removes %s', (_label, text, expected) => {
    expect(terminalText(text)).toBe(expected);
  });

  it('keeps text, emoji and accents, and newlines only where asked', () => {
    expect(terminalText('Café ☕ — 完成\nnext\tcol')).toBe('Café ☕ — 完成 next col');
    expect(terminalText('Café\nnext\tcol', { multiline: true })).toBe('Café\nnext\tcol');
  });

  it('cleans every string of a value, keeping its shape', () => {
    expect(terminalSafe({ type: 'node', title: 'x\u001b[2Jy', n: 3, list: ['\u0007a'], none: undefined })).toEqual({ type: 'node', title: 'xy', n: 3, list: ['a'], none: undefined });
  });
});
