import type { RunResult } from '../../index.js';
import { progressCount, type RunProgress } from '../progress/run-progress.js';
import { formatDuration } from './duration.js';
import { fileLines } from './files.js';
import type { Paint } from './paint.js';

/** The lines that close a run: how it ended, its failed nodes with their errors, its files with URLs. */
export function runSummary(result: RunResult, progress: RunProgress, nowMs: number, paint: Paint): readonly string[] {
  const { done, total } = progressCount(progress);
  const facts = `in ${formatDuration(nowMs - progress.startedAtMs)} · ${done}/${total} nodes · execution ${result.executionId}`;
  const headline = result.status === 'finish' ? `${paint.ok('✔ Run finished')} ${facts}` : `${paint.fail('✖ Run failed')} ${facts}`;
  const failures = result.failedNodes.map((node) => `  ${paint.fail('✖')} ${node.title ?? node.nodeId}: ${node.error?.message ?? 'failed'}`);
  return [headline, ...failures, ...fileLines(result.files, paint)];
}
