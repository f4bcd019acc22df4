import type { OutputNode } from '../../index.js';
import { ndjsonRenderer } from './ndjson-renderer.js';
import { plainRenderer } from './plain-renderer.js';
import { renderMode, type RunRenderer } from './renderer.js';
import { ttyRenderer } from './tty-renderer.js';
import { terminalSafe } from '../format/terminal-text.js';

/** What decides the display of a run. */
export interface DisplayOptions {
  readonly json: boolean;
  readonly quiet: boolean;
  /** Task nodes known before the first event (`watch` reads them when it attaches). */
  readonly known?: readonly OutputNode[];
  /** When the execution was created (service.md §4.1): `watch` counts the run's time from then. */
  readonly createdAt?: string;
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
/** The server's text reaches a terminal only cleaned of what the terminal would execute. NDJSON is JSON-escaped already. */
function forTerminal(renderer: RunRenderer): RunRenderer {
  return {
    event: (event) => {
      renderer.event(terminalSafe(event));
    },
    close: (result) => {
      renderer.close(result === undefined ? undefined : terminalSafe(result));
    },
  };
}

export function createRenderer(stream: NodeJS.WriteStream, options: DisplayOptions): RunRenderer {
  const known = {
    ...(options.known === undefined ? {} : { known: terminalSafe(options.known) }),
    ...(options.createdAt === undefined ? {} : { createdAt: options.createdAt }),
  };
  const mode = renderMode({ json: options.json, isTTY: stream.isTTY });
  switch (mode) {
    case 'json':
      return ndjsonRenderer(stream);
    case 'tty':
      return forTerminal(ttyRenderer(stream, { quiet: options.quiet, now: Date.now, colors: stream.hasColors(), ...known }));
    case 'plain':
      return forTerminal(plainRenderer(stream, { quiet: options.quiet, now: Date.now, ...known }));
    default:
      return mode satisfies never;
  }
}
