const segmenter = new Intl.Segmenter();

/** The user-perceived characters of a text, so that cutting it never splits one. */
export function graphemes(text: string): string[] {
  return Array.from(segmenter.segment(text), (part) => part.segment);
}
