import type { RunEvent } from '../../index.js';
import type { RunRenderer, TextSink } from './renderer.js';

/**
 * `--json`: every event as one line of JSON (NDJSON), exactly as the library emits it, for scripts.
 *
 * @example
 * ```ts
 * const renderer = ndjsonRenderer(process.stdout);
 * ```
 */
export function ndjsonRenderer(out: TextSink): RunRenderer {
  return {
    event: (event: RunEvent) => {
      out.write(`${JSON.stringify(event)}\n`);
    },
    close: () => undefined,
  };
}
