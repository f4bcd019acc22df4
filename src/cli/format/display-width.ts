import { eastAsianWidth } from 'get-east-asian-width';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** A whole emoji as Unicode recommends it (keycaps, flags, ZWJ families, text symbols with VS16 included). */
const EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');
/** What takes no column of its own: controls, combining marks and the invisible format characters. */
const ZERO_WIDTH = /^[\p{Cc}\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}]/u;

/**
 * The columns one grapheme cluster (what a reader sees as one character) takes in a terminal: 2 for an
 * emoji and for East Asian wide and fullwidth characters (CJK, kana, hangul), 0 for marks and
 * invisible characters, 1 for everything else (ambiguous ones included, as Unicode advises).
 */
export function graphemeWidth(grapheme: string): number {
  if (EMOJI.test(grapheme)) return 2;
  const codePoint = grapheme.codePointAt(0);
  if (codePoint === undefined || ZERO_WIDTH.test(grapheme)) return 0;
  return eastAsianWidth(codePoint);
}

/** The columns `text` (one line, no escape sequences) takes in a terminal. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += graphemeWidth(segment);
  return width;
}

/**
 * `text` (one line, no escape sequences) cut to at most `columns` terminal columns, between grapheme
 * clusters, so that no emoji, accented letter or wide character is split; a cut line ends in `…`.
 */
export function cutToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  const room = columns - 1;
  let kept = '';
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const next = graphemeWidth(segment);
    if (width + next > room) break;
    kept += segment;
    width += next;
  }
  return columns > 0 ? `${kept}…` : '';
}
