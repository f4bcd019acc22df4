import type { NodeStatus } from '../http/model.js';
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

export interface OutputAloneQuestion {
  readonly mode: OutputMode;
  /** The nodes as the run last saw them. */
  readonly nodes: readonly NodeStatus[];
  /** Time since the last output read; `undefined` when it was never read. */
  readonly sinceLastOutputMs: number | undefined;
}

/**
 * Whether the next read can be the output alone, without the status: in `stream` mode, when the output
 * is due anyway (a node executing, spaced as above) and the execution cannot have turned terminal since
 * the last read. The output lists every task node with its status (PROTOCOL §4.2) and only task nodes
 * move (§3.2), so it shows every node transition; what it lacks is the execution's status, which turns
 * terminal only after a node failed or when every node is done (§3.3) — both read the status again.
 * One request instead of two for each read while text streams: under a tight budget that halves what
 * a streaming run costs.
 */
export function shouldReadOutputAlone(question: OutputAloneQuestion): boolean {
  return (
    question.mode === 'stream' &&
    question.nodes.some((status) => status === 'executing') &&
    // A failed node turns the execution `failed`; a status we do not know might have done so too.
    !question.nodes.some((status) => status === 'failed' || status === 'unknown') &&
    (question.sinceLastOutputMs ?? Infinity) >= OUTPUT_SPACING_MS
  );
}
