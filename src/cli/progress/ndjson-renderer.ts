import type { RunEvent } from '../../index.js';
import type { RunRenderer, TextSink } from './renderer.js';

/**
 * `--json`: every event as one line of JSON (NDJSON), exactly as the library emits it, for scripts,
 * with `at`: when it was shown (ISO 8601), for logs and timings.
 */
export function ndjsonRenderer(out: TextSink, now: () => number = Date.now): RunRenderer {
  return {
    event: (event: RunEvent) => {
      out.write(`${JSON.stringify({ ...event, at: new Date(now()).toISOString() })}\n`);
    },
    close: () => undefined,
  };
}
