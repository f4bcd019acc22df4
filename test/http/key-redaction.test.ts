import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, decodedForms, REDACTED } from '../../src/http/key-redaction.js';

const KEY = 'rf_SECRETsecretSECRETsecret0123456789';
const redact = createRedactor(KEY);

/**
 * Ways a server can encode text, written independently of the code under test. Each escapes its own
 * escape character first, so layers stack as real encoders stack them.
 */
const ENCODINGS: Readonly<Record<string, (text: string) => string>> = {
  percentAll: (text) => text.replace(/[\s\S]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`),
  percentSome: (text) => text.replace(/[%_S0]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
  unicodeEscape: (text) => text.replace(/\\/g, '\\\\').replace(/[a-z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  hexEscape: (text) => text.replace(/\\/g, '\\\\').replace(/[A-Z]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`),
  htmlDecimal: (text) => text.replace(/[\s\S]/g, (c) => `&#${c.charCodeAt(0)};`),
  htmlHex: (text) => text.replace(/&/g, '&amp;').replace(/[0-9]/g, (c) => `&#x${c.charCodeAt(0).toString(16)};`),
  htmlLowbar: (text) => text.replace(/&/g, '&amp;').replace(/_/g, '&lowbar;'),
  htmlUnderBar: (text) => text.replace(/&/g, '&amp;').replace(/_/g, '&UnderBar;'),
  htmlNoSemicolon: (text) => text.replace(/&/g, '&amp;').replace(/_/g, '&#95'),
  octalEscape: (text) => text.replace(/\\/g, '\\\\').replace(/_/g, '\\137'),
  upper: (text) => text.toUpperCase(),
};

/** Everything a reader could get out of `text` by decoding it, deeper than the redaction looks. */
const decodedViews = (text: string): string[] => [text, ...decodedForms(text, 6)];

const revealsKey = (text: string): boolean => decodedViews(text).some((view) => view.toLowerCase().includes(KEY.toLowerCase()));

describe('createRedactor', () => {
  const layers = fc.array(fc.constantFrom(...Object.keys(ENCODINGS)), { maxLength: 3 });
  const echo = (encodings: readonly string[]): string => encodings.reduce((text, encoding) => ENCODINGS[encoding]!(text), KEY);

  it('finds the key, plain or under up to three layers of encoding, wherever it sits in a text', () => {
    const prose = fc.string().map((text) => text.replace(/[\\%&]/g, ' '));
    fc.assert(
      fc.property(prose, layers, prose, (before, encodings, after) => {
        const cleaned = redact.text(`${before}${echo(encodings)}${after}`);
        expect(cleaned).toContain(REDACTED);
        expect(revealsKey(cleaned)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['&lowbar;', 'rf&lowbar;'],
    ['&UnderBar;', 'rf&UnderBar;'],
    ['&#95;', 'rf&#95;'],
    ['&#x5f;', 'rf&#x5f;'],
    ['&#X5F;', 'rf&#X5F;'],
    ['&#0095;', 'rf&#0095;'],
    ['&#95 without its ;', 'rf&#95'],
    ['&#x5f without its ;', 'rf&#x5f'],
    ['an octal escape', 'rf\\137'],
    ['%5F', 'rf%5F'],
    ['\\x5f', 'rf\\x5f'],
    ['\\u005f', 'rf\\u005f'],
  ])('finds the key with its _ written as %s', (_form, prefix) => {
    const echoed = `Invalid API key ${prefix}${KEY.slice(3)} (see the docs)`;
    const cleaned = redact.text(echoed);
    expect(cleaned).toBe(`Invalid API key ${REDACTED} (see the docs)`);
  });

  it('leaves no reading of a text that shows the key, whatever surrounds it', () => {
    fc.assert(
      fc.property(fc.string(), layers, fc.string(), (before, encodings, after) => {
        expect(revealsKey(redact.text(`${before}${echo(encodings)}${after}`))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves text that holds no key exactly as sent, encodings included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(redact.text(text)).toBe(text);
      }),
    );
    const innocent = 'a%20b \\n &amp; rf_other%5Fkey';
    expect(redact.text(innocent)).toBe(innocent);
  });

  it('cleans every string and property name of parsed JSON, at any depth, without a setter reached', () => {
    const deep = JSON.parse(`${'['.repeat(20_000)}"${KEY}"${']'.repeat(20_000)}`) as unknown;
    redact.json(deep);
    let innermost: unknown = deep;
    while (Array.isArray(innermost)) innermost = innermost[0];
    expect(innermost).toBe(REDACTED);

    const value = JSON.parse(`{"__proto__":{"k":"${KEY}"},"${KEY}":1,"list":["a","${KEY.replace(/S/g, '\\u0053')}"],"n":null}`) as Record<string, unknown>;
    expect(redact.json(value)).toBe(value);
    expect(JSON.stringify(value)).toBe(`{"__proto__":{"k":"${REDACTED}"},"list":["a","${REDACTED}"],"n":null,"${REDACTED}":1}`);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(redact.json(`x ${KEY}`)).toBe(`x ${REDACTED}`);
  });

  it('leaves parsed JSON with no key exactly as parsed, and leaves no key in any string or name of JSON that has it', () => {
    const strings = (value: unknown): string[] =>
      typeof value === 'string' ? [value] : typeof value === 'object' && value !== null ? Object.entries(value).flatMap(([name, item]) => [name, ...strings(item)]) : [];
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        fc.pre(!revealsKey(text));
        expect(redact.json(JSON.parse(text))).toEqual(JSON.parse(text));
      }),
    );
    fc.assert(
      fc.property(fc.jsonValue(), layers, fc.boolean(), fc.string(), (value, encodings, asName, around) => {
        const echoed = `${around}${echo(encodings)}${around}`;
        const holder = asName ? { [echoed]: value } : { data: [value, echoed] };
        const cleaned = redact.json(JSON.parse(JSON.stringify(holder)));
        expect(strings(cleaned).filter(revealsKey)).toEqual([]);
      }),
    );
  });

  it('returns an error that holds no key as it is, and a cleaned copy of the same class otherwise', () => {
    const clean = new TypeError('fetch failed', { cause: new Error('socket hang up') });
    expect(redact.error(clean)).toBe(clean);

    const parserError = Object.assign(new Error(`Invalid status ${KEY}`), { code: 'HPE_INVALID_STATUS', data: `HTTP/1.1 2${KEY} OK` });
    const dirty = new TypeError('fetch failed', { cause: parserError });
    const copy = redact.error(dirty) as TypeError & { cause: Error & { code: string; data: string } };
    expect(copy).not.toBe(dirty);
    expect(copy).toBeInstanceOf(TypeError);
    expect(copy.message).toBe('fetch failed');
    expect(copy.cause.message).toBe(`Invalid status ${REDACTED}`);
    expect(copy.cause).toMatchObject({ code: 'HPE_INVALID_STATUS', data: `HTTP/1.1 2${REDACTED} OK` });
    expect(copy.cause.stack).not.toContain(KEY);
    expect(parserError.data).toContain(KEY); // the original is not touched

    const withBytes = redact.error(Object.assign(new Error('bad answer'), { bytes: new TextEncoder().encode(`HTTP/1.1 2${KEY}`) })) as { bytes: unknown };
    expect(withBytes.bytes).toBe(`HTTP/1.1 2${REDACTED}`);
  });

  it('drops what nests deeper than it searches rather than keep a key it did not look at', () => {
    let nested: Error = new Error(KEY);
    for (let depth = 0; depth < 20; depth += 1) nested = new Error(`level ${depth}`, { cause: nested });
    const copy = redact.error(nested);
    expect(copy).not.toBe(nested);
    expect(JSON.stringify(copy, Object.getOwnPropertyNames(copy))).not.toContain(KEY);
    let cause: unknown = copy;
    let found = false;
    while (cause instanceof Error) {
      found ||= cause.message.includes(KEY);
      cause = cause.cause;
    }
    expect(found).toBe(false);
  });
});
