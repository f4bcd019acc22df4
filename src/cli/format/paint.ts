/** The few styles the command uses. */
export interface Paint {
  readonly ok: (text: string) => string;
  readonly fail: (text: string) => string;
  readonly busy: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly bold: (text: string) => string;
}

const plain = (text: string): string => text;

/** An SGR style: `open` before the text, `close` after it (ECMA-48). */
const style =
  (open: number, close: number) =>
  (text: string): string =>
    `\u001B[${String(open)}m${text}\u001B[${String(close)}m`;

/**
 * Styles that colour only when `enabled` (a TTY that has colours: `hasColors()` honours `NO_COLOR`
 * and `FORCE_COLOR`), so that pipes and logs get plain text.
 *
 * The decision is the caller's, for the stream it writes to: colour libraries that decide once, at
 * import, from the process's environment would colour a pipe or leave a terminal grey.
 */
export function createPaint(enabled: boolean): Paint {
  if (!enabled) return { ok: plain, fail: plain, busy: plain, dim: plain, bold: plain };
  return { ok: style(32, 39), fail: style(31, 39), busy: style(36, 39), dim: style(2, 22), bold: style(1, 22) };
}
