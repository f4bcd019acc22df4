import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrubSecret } from '../../src/http/secret.js';

const KEY = 'rf_SECRETsecretSECRETsecret0123456789';

/** JSON text of `value` with every character of the key spelled as a `\uXXXX` escape where `pick` says so. */
function escaped(value: string, pick: (index: number) => boolean): string {
  return JSON.stringify(value).replace(/rf_[A-Za-z0-9]+/u, (key) => Array.from(key, (character) => character).map((character, index) => (pick(index) ? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}` : character)).join(''));
}

describe('scrubSecret', () => {
  it('removes the key as the server spelled it, plain or JSON-escaped, so that parsing cannot bring it back', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: KEY.length, maxLength: KEY.length }), fc.string(), (picks, around) => {
        const text = escaped(`${around} Invalid API key ${KEY} ${around}`, (index) => picks[index] ?? false);
        const parsed = JSON.parse(scrubSecret(text, KEY)) as string;
        expect(parsed).not.toContain(KEY);
        expect(parsed).toContain('[redacted]');
      }),
    );
  });

  it('changes nothing else: text without the key stays as it was, escapes included', () => {
    const text = '{"message":"caf\\u00e9 \\u0053 \\\\u0053 \\""}';
    expect(scrubSecret(text, KEY)).toBe(text);
  });

  it('does not take an escaped backslash followed by u for an escape', () => {
    const text = JSON.stringify(`\\u0072f_${KEY.slice(3)}`);
    expect(JSON.parse(scrubSecret(text, KEY))).toBe(`\\u0072f_${KEY.slice(3)}`);
  });
});
