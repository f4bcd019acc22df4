import type { NodeStatus } from '../domain/model.js';

/**
 * How far a node has come on its one-way path `init → waiting → executing → finish | failed`
 * (service.md §3.2; `waiting` only in the spec, §3.1). `unknown` ranks below everything: a value we do
 * not know never overwrites one we do, and any known status moves a node on from it.
 */
export function nodeRank(status: NodeStatus): number {
  switch (status) {
    case 'unknown':
      return -1;
    case 'init':
      return 0;
    case 'waiting':
      return 1;
    case 'executing':
      return 2;
    case 'finish':
    case 'failed':
      return 3;
    default:
      return status satisfies never;
  }
}

/** A node that will not change any more. */
export function isNodeDone(status: NodeStatus): boolean {
  return status === 'finish' || status === 'failed';
}
