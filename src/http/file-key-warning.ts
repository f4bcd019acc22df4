import type { Logger, Variables } from '../domain/model.js';

/**
 * Warns about text values the service will misread as file keys: any string starting with `of_` is
 * taken as an uploaded fileKey (service.md §5.5), so `of_course` silently becomes a missing file. Keys
 * this client uploaded are known and pass quietly; arrays are checked element by element, because an
 * array is a file list only when every element is a key.
 */
export function warnAboutFileKeyLookalikes(variables: Variables, uploaded: ReadonlySet<string>, logger: Logger | undefined): void {
  if (logger === undefined) return;
  for (const [name, value] of Object.entries(variables)) {
    const texts = Array.isArray(value) ? value : [value];
    for (const text of texts) {
      if (typeof text === 'string' && text.startsWith('of_') && !uploaded.has(text)) {
        logger.warn(
          `flowstream: variable "${name}" starts with "of_" but is not a file this client uploaded; the service will read it as a fileKey (service.md §5.5)`,
          { variable: name },
        );
      }
    }
  }
}
