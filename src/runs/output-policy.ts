import type { NodeStatus } from '../domain/model.js';

/**
 * `stream`: read the output while task nodes run, so message events arrive as the text does.
 * `final`: read it once, at the end.
 */
export type OutputMode = 'stream' | 'final';

export const OUTPUT_MODES: readonly unknown[] = ['stream', 'final'] satisfies readonly OutputMode[];

/**
 * While nodes run, the service persists new messages in batches about every 3 s (service.md §4.4) and
 * the output endpoint is slow (§2.5): reading it more often than this would mostly read nothing new.
 */
export const OUTPUT_SPACING_MS = 3000;

export interface OutputQuestion {
  readonly mode: OutputMode;
  /** The execution reached `finish` or `failed`: the last read, for the final messages and files. */
  readonly terminal: boolean;
  /** The nodes as the status read shows them. */
  readonly nodes: readonly NodeStatus[];
  /** Time since the last output read; `undefined` when it was never read. */
  readonly sinceLastOutputMs: number | undefined;
}

/**
 * Whether a status read goes on to read the output: only when it can have changed (service.md §2.5).
 * Always at the end, for the final messages and files. In `stream` mode also, spaced, while a node
 * executes, but only when the next read cannot be the output alone (`shouldReadOutputAlone`: a node
 * failed or has a status we do not know); otherwise the text comes with that next read, one request
 * instead of two.
 */
export function shouldReadOutput(question: OutputQuestion): boolean {
  if (question.terminal) return true;
  switch (question.mode) {
    case 'final':
      return false;
    case 'stream':
      return (
        question.nodes.some((status) => status === 'executing') &&
        !outputShowsEveryChange(question.nodes) &&
        (question.sinceLastOutputMs ?? Infinity) >= OUTPUT_SPACING_MS
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
  /** A node ended after the last output read: its last messages and its files are there to read (§4.6). */
  readonly nodeEndedSinceOutput: boolean;
}

/**
 * Whether the next read can be the output alone, without the status: in `stream` mode, while a node
 * executes, when the output is due (spaced as above, or a node has ended since it was last read) and
 * the output shows every change the status could (`outputShowsEveryChange`). So a streaming run
 * spends one request per read, as a run that reads its output only at the end does.
 */
export function shouldReadOutputAlone(question: OutputAloneQuestion): boolean {
  return (
    question.mode === 'stream' &&
    outputShowsEveryChange(question.nodes) &&
    (question.nodeEndedSinceOutput || (question.sinceLastOutputMs ?? Infinity) >= OUTPUT_SPACING_MS)
  );
}

/**
 * Whether an output read can stand in for a status read, from nodes at these statuses. The output
 * lists every task node with its status (service.md §4.2), the only nodes that execute (§3.2; a
 * content node's one step, `init → finish`, waits for the next status read); what it lacks is the
 * execution's status, which turns terminal only after a node failed or when none is pending or
 * executing (§3.3). So: some node still executes, none failed, and none has a status we do not know
 * (it might have ended the execution too).
 */
function outputShowsEveryChange(nodes: readonly NodeStatus[]): boolean {
  return nodes.some((status) => status === 'executing') && !nodes.some((status) => status === 'failed' || status === 'unknown');
}
