import type { NodeStatus } from '../../index.js';
import { type NodeProgress, nodeElapsedMs } from '../progress/run-progress.js';
import { formatDuration } from './duration.js';
import type { Paint } from './paint.js';

/** The mark of a node status; `spinner` stands for an executing node on a TTY. */
export function statusMark(status: NodeStatus, paint: Paint, spinner = '›'): string {
  switch (status) {
    case 'finish':
      return paint.ok('✔');
    case 'failed':
      return paint.fail('✖');
    case 'executing':
      return paint.busy(spinner);
    case 'init':
    case 'waiting':
    case 'unknown':
      return paint.dim('·');
    default:
      return status satisfies never;
  }
}

/** One node as a progress line: mark, title, status and elapsed time, and the error of a failed node. */
export function nodeLine(node: NodeProgress, nowMs: number, paint: Paint, spinner?: string): string {
  const elapsed = nodeElapsedMs(node, nowMs);
  const parts = [
    `${statusMark(node.status, paint, spinner)} ${paint.bold(node.title)}`,
    node.status === 'failed' ? paint.fail(node.status) : node.status,
    ...(elapsed === undefined ? [] : [paint.dim(formatDuration(elapsed))]),
  ];
  const error = node.error === undefined ? '' : ` ${paint.fail(`— ${node.error.message}`)}`;
  return `${parts.join('  ')}${error}`;
}
