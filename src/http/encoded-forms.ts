/**
 * The encodings a server can wrap text in before it reaches us as a plain string: percent-encoding
 * (a URL, a query string), backslash escapes (JSON or JavaScript source inside a message, which
 * `JSON.parse` of the outer body leaves as text) and HTML character references (a proxy's error page).
 * {@link decodedForms} lists what a reader can make of a text by undoing them layer after layer, so
 * the key's redaction finds a key hidden under any mix of them.
 */

const PERCENT_RUN = /(?:%[0-9a-f]{2})+/gi;
/** `\u{…}`, `\uXXXX`, `\xXX`, octal `\137` (C, and JavaScript's legacy form) and one-character escapes. */
const BACKSLASH_ESCAPE = /\\(?:u\{([0-9a-f]{1,6})\}|u([0-9a-f]{4})|x([0-9a-f]{2})|([0-7]{1,3})|([^ux]))/gi;
/**
 * Numeric references, with or without their `;` (HTML readers decode both), and the named ones a key
 * or its surroundings can hide under: `_` has two names of its own (`&lowbar;`, `&UnderBar;`).
 */
const CHARACTER_REFERENCE = /&(?:#x([0-9a-f]{1,6});?|#(\d{1,7});?|(amp|lt|gt|quot|apos|lowbar|underbar);)/gi;

const SINGLE_ESCAPES: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', '0': '\0' };
const NAMED_REFERENCES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", lowbar: '_', underbar: '_' };

function codePoint(value: number, original: string): string {
  return value <= 0x10ffff ? String.fromCodePoint(value) : original;
}

/** A run of `%XX` as UTF-8; a run that is not valid UTF-8 is decoded byte by byte (Latin-1), as a lenient reader would. */
function decodePercentRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    return run.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
}

function decodePercent(text: string): string {
  return text.replace(PERCENT_RUN, decodePercentRun);
}

function decodeBackslashEscapes(text: string): string {
  return text.replace(BACKSLASH_ESCAPE, (match: string, braced?: string, four?: string, two?: string, octal?: string, single?: string) => {
    const hex = braced ?? four ?? two;
    if (hex !== undefined) return codePoint(Number.parseInt(hex, 16), match);
    if (octal !== undefined) return String.fromCharCode(Number.parseInt(octal, 8));
    return single === undefined ? match : (SINGLE_ESCAPES[single] ?? single);
  });
}

function decodeCharacterReferences(text: string): string {
  return text.replace(CHARACTER_REFERENCE, (match: string, hex?: string, decimal?: string, name?: string) => {
    if (hex !== undefined) return codePoint(Number.parseInt(hex, 16), match);
    if (decimal !== undefined) return codePoint(Number.parseInt(decimal, 10), match);
    return name === undefined ? match : (NAMED_REFERENCES[name.toLowerCase()] ?? match);
  });
}

const DECODERS: readonly ((text: string) => string)[] = [decodePercent, decodeBackslashEscapes, decodeCharacterReferences];

/**
 * Every text a reader can get from `text` by undoing one encoding at a time, in any order, at most
 * `layers` times (depth first; a form reached by two orders comes twice). Each step is a reading of
 * its own, and the order matters: percent-decoding `\%72f` gives `\rf`, where `rf` shows, while
 * undoing the escape first gives `%72f`; and a layer undone too early can spoil the layers under it.
 */
export function* decodedForms(text: string, layers: number): Generator<string, void, undefined> {
  if (layers <= 0 || !mayBeEncoded(text)) return;
  for (const decode of DECODERS) {
    const decoded = decode(text);
    if (decoded === text) continue;
    yield decoded;
    yield* decodedForms(decoded, layers - 1);
  }
}

/**
 * Whether `text` holds anything a decoding could change: the cheap test that lets most
 * strings skip the decoding.
 */
export function mayBeEncoded(text: string): boolean {
  return text.includes('%') || text.includes('\\') || text.includes('&');
}
