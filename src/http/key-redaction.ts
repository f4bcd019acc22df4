/** What the API key is replaced with wherever a server sent it back. */
export const REDACTED = '[redacted]';

/** Layers of encoding looked through: a key encoded more often than this is no longer text anyone reads. */
const MAX_DECODE_LAYERS = 4;
/** A whitespace-free run of text: where one key, however encoded, must lie whole. */
const TOKEN = /\S+/g;
/** How deep an error's causes and fields are searched; anything deeper is dropped from a cleaned copy. */
const MAX_ERROR_DEPTH = 6;

/**
 * Removes the API key from everything a server sent: a server may echo the key (`Invalid API key
 * rf_…`), plainly or encoded, in its body, its status line or a malformed answer that ends up in a
 * `fetch` error. Every server-provided text passes through one of these before an error, a log or
 * the caller sees it.
 */
export interface Redactor {
  /** The text with every occurrence of the key — plain, in any letter case, or under layers of encoding — replaced. */
  text(text: string): string;
  /** A value made by `JSON.parse`, with the key removed from every string and property name, rewritten in place (any depth). */
  json(value: unknown): unknown;
  /** The error itself when no text in it (message, stack, fields, causes) holds the key; otherwise a cleaned copy of the same class. */
  error(error: unknown): unknown;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** Writes a property without ever reaching a setter (a JSON key may be `__proto__`). */
function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Own data properties only: reading an accessor could run code, and is not what the error holds. */
function ownData(value: object): [string, unknown, PropertyDescriptor][] {
  return Object.getOwnPropertyNames(value).flatMap((name) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, name);
    return descriptor !== undefined && 'value' in descriptor ? [[name, descriptor.value as unknown, descriptor] as [string, unknown, PropertyDescriptor]] : [];
  });
}

function bytesAsText(view: ArrayBufferView): string {
  return new TextDecoder().decode(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
}

/** Builds the redactor of one API key. The key holds no whitespace (`normalizeOptions` refuses one that does). */
export function createRedactor(secret: string): Redactor {
  // One pattern: `search` ignores its global flag's state, so it also tells whether the key is there.
  const every = new RegExp(escapeRegExp(secret), 'gi');
  const hide = (text: string): string => text.replace(every, REDACTED);
  /** A whitespace-free piece of text, rid of a key hidden under encodings: replaced by the decoded form that showed it. */
  const cleanToken = (token: string): string => {
    let result = token;
    // Each rewrite makes the token shorter (decoding and hiding both do), so this ends.
    for (let found = true; found && result.length >= secret.length; ) {
      found = false;
      for (const form of decodedForms(result, MAX_DECODE_LAYERS)) {
        if (form.search(every) !== -1) {
          result = hide(form);
          found = true;
          break;
        }
      }
    }
    return result;
  };

  const text = (original: string): string => {
    // Every encoding spells a character with more than one, so a text shorter than the key holds
    // none of it, plain or encoded: most of an answer's strings (ids, statuses, times) end here.
    if (original.length < secret.length) return original;
    const result = hide(original);
    if (!mayBeEncoded(result)) return result;
    // The key holds no whitespace, and decoding leaves whitespace as it is, so a key under encodings
    // lies within one whitespace-free token: each is searched on its own, which keeps the search
    // small however long the text. Text without the key stays exactly as sent.
    return result.replace(TOKEN, (token) => (mayBeEncoded(token) ? cleanToken(token) : token));
  };

  const json = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value);
    // An explicit stack, not recursion: a hostile body may nest 20,000 levels deep.
    const pending: unknown[] = [value];
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      if (!isObject(node)) continue;
      if (Array.isArray(node)) {
        const items = node as unknown[];
        items.forEach((item, index) => {
          if (typeof item === 'string') items[index] = text(item);
          else pending.push(item);
        });
        continue;
      }
      // `JSON.parse` makes own, enumerable data properties only, so they are read as they are; a
      // property is written again only where the key was found in its name or its text.
      const record = node as Record<string, unknown>;
      for (const name of Object.keys(record)) {
        const item = record[name];
        const cleanName = text(name);
        const cleanItem = typeof item === 'string' ? text(item) : item;
        if (typeof item !== 'string') pending.push(item);
        if (cleanName === name && cleanItem === item) continue;
        if (cleanName !== name) Reflect.deleteProperty(record, name);
        setOwn(record, cleanName, cleanItem);
      }
    }
    return value;
  };

  /** True when some text in `value` holds the key, or when it nests deeper than is searched. */
  const holdsKey = (value: unknown, depth: number): boolean => {
    if (typeof value === 'string') return text(value) !== value;
    if (ArrayBuffer.isView(value)) return holdsKey(bytesAsText(value), depth);
    if (!isObject(value)) return false;
    if (depth >= MAX_ERROR_DEPTH) return true;
    return ownData(value).some(([name, item]) => text(name) !== name || holdsKey(item, depth + 1));
  };

  const cleanCopy = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return text(value);
    if (ArrayBuffer.isView(value)) return text(bytesAsText(value)); // raw bytes of an answer, as the text they spell
    if (!isObject(value)) return value;
    if (depth >= MAX_ERROR_DEPTH) return undefined;
    if (Array.isArray(value)) return value.map((item: unknown) => cleanCopy(item, depth + 1));
    const prototype = Object.getPrototypeOf(value) as object | null;
    // A real Error keeps what tools rely on (stack, `instanceof`, how `inspect` shows it).
    const copy = value instanceof Error ? (Object.setPrototypeOf(new Error(), prototype) as object) : (Object.create(prototype) as object);
    for (const [name, item, descriptor] of ownData(value)) {
      Object.defineProperty(copy, text(name), { ...descriptor, value: cleanCopy(item, depth + 1) });
    }
    return copy;
  };

  return {
    text,
    json,
    error: (error: unknown): unknown => (holdsKey(error, 0) ? cleanCopy(error, 0) : error),
  };
}

// --- the encodings a key can hide under ------------------------------------------------------------

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
