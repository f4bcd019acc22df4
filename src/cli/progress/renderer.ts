import type { RunEvent, RunResult } from '../../index.js';

/** Where text goes: `process.stdout` or anything with `write`. */
export interface TextSink {
  write(text: string): unknown;
}

/**
 * Shows a run as it goes. `event` is called for every event in order; `close` once at the end, with
 * the result when the run reached `finished` — it stops timers and prints the closing lines.
 */
export interface RunRenderer {
  event(event: RunEvent): void;
  close(result: RunResult | undefined): void;
}

/** Which display a command uses: NDJSON for scripts, live frames on a TTY, plain lines elsewhere. */
export type RenderMode = 'json' | 'tty' | 'plain';

/** The display for a stream and the user's flags: animation only on a TTY, never with `--json`. */
export function renderMode(options: { readonly json: boolean; readonly isTTY: boolean | undefined }): RenderMode {
  if (options.json) return 'json';
  return options.isTTY === true ? 'tty' : 'plain';
}
