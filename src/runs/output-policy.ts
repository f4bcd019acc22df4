import type { NodeEvent } from './events.js';
import { isNodeDone } from './node-progress.js';

/**
 * `stream`: read the output while task nodes run, so message events arrive as the text does.
 * `final`: read it once, at the end.
 */
export type OutputMode = 'stream' | 'final';

/**
 * While nodes run, the service persists new messages in batches about every 3 s (PROTOCOL §4.4) and
 * the output endpoint is slow (§2.5): reading it more often than this would mostly read nothing new.
 */
export const OUTPUT_SPACING_MS = 3000;

export interface OutputQuestion {
  readonly mode: OutputMode;
  /** The execution reached `finish` or `failed`: the last read, for the final messages and files. */
  readonly terminal: boolean;
  /** The node events of this status read. */
  readonly nodeEvents: readonly NodeEvent[];
  /** Some node is executing now. */
  readonly executing: boolean;
  /** Time since the last output read; `undefined` when it was never read. */
  readonly sinceLastOutputMs: number | undefined;
}

/**
 * Whether to read the output now: only when it can have changed (PROTOCOL §2.5). Always at the end;
 * in `stream` mode also when a node has just ended (its last messages; files appear only for
 * finished nodes, §4.6) and, spaced, while a node is executing.
 */
export function shouldReadOutput(question: OutputQuestion): boolean {
  if (question.terminal) return true;
  switch (question.mode) {
    case 'final':
      return false;
    case 'stream':
      return (
        question.nodeEvents.some((event) => isNodeDone(event.status)) ||
        (question.executing && (question.sinceLastOutputMs ?? Infinity) >= OUTPUT_SPACING_MS)
      );
    default:
      return question.mode satisfies never;
  }
}
