/**
 * `\uXXXX` escapes of the characters an API key is made of (PROTOCOL §1.5: `rf_` and base62). They
 * never need escaping in JSON, so un-escaping them keeps the text's meaning while letting the key be
 * found however the server spelled it. An escape preceded by an odd run of backslashes is not one
 * (`\\u0053` is a backslash and `u0053`), so the run before it is matched and kept.
 */
const KEY_CHARACTER_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(00(?:3[0-9]|4[1-9a-fA-F]|5[0-9aAfF]|6[1-9a-fA-F]|7[0-9aA]))/gu;

/**
 * Removes the API key from text a server sent, before anything reads it: errors, logs and parsed data
 * never hold the key, even from a server that echoes it, plainly or JSON-escaped
 * (`rf_\u0053ECRET…`, which `JSON.parse` would turn back into the key).
 *
 * @example
 * ```ts
 * scrubSecret('{"message":"Invalid API key rf_abc"}', 'rf_abc'); // '{"message":"Invalid API key [redacted]"}'
 * ```
 */
export function scrubSecret(text: string, secret: string): string {
  if (secret === '') return text;
  const unescaped = text.includes('\\u') ? text.replace(KEY_CHARACTER_ESCAPE, (_match, backslashes: string, code: string) => backslashes + String.fromCharCode(Number.parseInt(code, 16))) : text;
  return unescaped.includes(secret) ? unescaped.split(secret).join('[redacted]') : text;
}
