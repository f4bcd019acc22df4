import { ndjsonRenderer } from './ndjson-renderer.js';
import { plainRenderer } from './plain-renderer.js';
import { renderMode, type RunRenderer } from './renderer.js';
import { ttyRenderer } from './tty-renderer.js';

/** What decides the display of a run. */
export interface DisplayOptions {
  readonly json: boolean;
  readonly quiet: boolean;
}

/**
 * The display of a run on `stream` (usually stdout): NDJSON with `--json`, live frames on a TTY,
 * plain lines in pipes and CI.
 *
 * @example
 * ```ts
 * const renderer = createRenderer(process.stdout, { json: false, quiet: false });
 * ```
 */
export function createRenderer(stream: NodeJS.WriteStream, options: DisplayOptions): RunRenderer {
  const mode = renderMode({ json: options.json, isTTY: stream.isTTY });
  switch (mode) {
    case 'json':
      return ndjsonRenderer(stream);
    case 'tty':
      return ttyRenderer(stream, { quiet: options.quiet, now: Date.now, colors: stream.hasColors() });
    case 'plain':
      return plainRenderer(stream, { quiet: options.quiet, now: Date.now });
    default:
      return mode satisfies never;
  }
}
