import type { RunResult } from '../../index.js';
import { countLabel, progressCount, type RunProgress } from '../progress/run-progress.js';
import { formatDuration } from './duration.js';
import { fileLines } from './files.js';
import type { Paint } from './paint.js';

/** How a run ended, in the words of its closing line. */
export type RunOutcomeWord = 'finished' | 'failed' | 'aborted' | 'timed out';

/**
 * What an abort leaves on the nodes it stopped: `Workflow aborted by user` (service.md §3.5), and on a
 * node that was executing, later, `Operation was aborted.` (§3.6).
 */
const ABORT_MESSAGES = new Set(['Workflow aborted by user', 'Operation was aborted.']);
/** What the service's 30-minute limit leaves on the nodes it stopped (service.md §3.6). */
const SERVICE_TIMEOUT = /^Workflow execution timeout exceeded\b/u;

/**
 * How a run ended. This client's own abort or deadline says so (`endedBy`); for an execution ended
 * elsewhere (`watch`), the failed nodes tell: the service has no `aborted` status, an abort fails every
 * unfinished node with its own message (service.md §3.5), and any other failure ended the execution
 * first (§3.3).
 */
export function runOutcomeWord(result: RunResult): RunOutcomeWord {
  switch (result.endedBy) {
    case 'finish':
      return 'finished';
    case 'aborted':
      return 'aborted';
    case 'timeout':
      return 'timed out';
    case 'failed': {
      const messages = result.failedNodes.flatMap((node) => node.error?.messages ?? []);
      if (messages.length > 0 && messages.every((message) => ABORT_MESSAGES.has(message.trim()))) return 'aborted';
      if (messages.length > 0 && messages.every((message) => SERVICE_TIMEOUT.test(message.trim()))) return 'timed out';
      return 'failed';
    }
    default:
      return result.endedBy satisfies never;
  }
}

/**
 * The lines that close a run: how it ended, its failed nodes with their errors, the branches still
 * running after a failure (service.md §3.3: they run on, spending credits, until aborted), its files
 * with URLs.
 */
export function runSummary(result: RunResult, progress: RunProgress, nowMs: number, paint: Paint): readonly string[] {
  const facts = `in ${formatDuration(nowMs - progress.startedAtMs)} · ${countLabel(progressCount(progress))} · execution ${result.executionId}`;
  const word = runOutcomeWord(result);
  const headline = word === 'finished' ? `${paint.ok('✔ Run finished')} ${facts}` : `${paint.fail(`✖ Run ${word}`)} ${facts}`;
  const failures = result.failedNodes.map((node) => `  ${paint.fail('✖')} ${node.title ?? node.nodeId}: ${node.error?.message ?? 'failed'}`);
  const running = result.runningNodes.map(
    (node) => `  ${paint.busy('›')} ${node.title ?? node.nodeId}: still running after the failure; flowstream abort ${result.executionId} stops it`,
  );
  return [headline, ...failures, ...running, ...fileLines(result.files, paint)];
}
