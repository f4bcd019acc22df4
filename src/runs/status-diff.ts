import type { ExecutionSnapshot, NodeExecution } from '../domain/model.js';
import type { NodeEvent, RunEvent } from './events.js';
import type { ExecutionView } from './execution-view.js';
import { nodeRank } from './node-progress.js';
import { type ViewDiff, WarningLog } from './view-diff.js';

function nodeEvent(executionId: string, node: NodeExecution, previous: NodeExecution | undefined): NodeEvent {
  return {
    type: 'node',
    executionId,
    nodeId: node.nodeId,
    status: node.status,
    ...(node.title === undefined ? {} : { title: node.title }),
    ...(previous === undefined ? {} : { previous: previous.status }),
    ...(node.error === undefined ? {} : { error: node.error }),
  };
}

/** Only a node's own fields: an output node (service.md §4.2) also carries its messages and times. */
function nodeOf({ nodeId, status, rawStatus, title, error }: NodeExecution): NodeExecution {
  return { nodeId, status, rawStatus, ...(title === undefined ? {} : { title }), ...(error === undefined ? {} : { error }) };
}

/** Moves the nodes of `reading` forward in `nodes`, pushing one event per node that moved. */
export function moveNodes(executionId: string, nodes: Map<string, NodeExecution>, reading: readonly NodeExecution[], log: WarningLog, events: RunEvent[]): void {
  for (const node of reading.map(nodeOf)) {
    const known = nodes.get(node.nodeId);
    if (node.status === 'unknown') {
      log.once(`node:${node.nodeId}:${node.rawStatus}`, 'Unknown node status', { executionId, nodeId: node.nodeId, status: node.rawStatus });
    }
    if (known === undefined) {
      nodes.set(node.nodeId, node);
      events.push(nodeEvent(executionId, node, undefined));
    } else if (nodeRank(node.status) > nodeRank(known.status)) {
      nodes.set(node.nodeId, node);
      events.push(nodeEvent(executionId, node, known));
    } else if (node.status === known.status) {
      // Same status: keep the fresher title and error without an event; a reading that lacks one (an
      // output node's error may be `null`, service.md §4.2, §4.3) does not take it away.
      nodes.set(node.nodeId, { ...node, ...(node.title === undefined && known.title !== undefined ? { title: known.title } : {}), ...(node.error === undefined && known.error !== undefined ? { error: known.error } : {}) });
    } else if (node.status !== 'unknown') {
      log.once(`regress:${node.nodeId}:${known.status}:${node.status}`, 'Ignored a node status that went backwards', {
        executionId,
        nodeId: node.nodeId,
        from: known.status,
        to: node.status,
      });
    }
  }
}

/**
 * Compares a status reading with the view: a `status` event when the execution's status changed, then
 * one `node` event per node that moved forward, in the reading's parents-before-children order
 * (service.md §4.1). A node that jumped several steps between two polls gives one event from where it
 * was. A reading that would move a node backwards (a stale read) or to a status we do not know is not
 * believed: the node keeps its furthest status and the oddity is logged once.
 */
export function diffStatus(view: ExecutionView, snapshot: ExecutionSnapshot): ViewDiff {
  const log = new WarningLog(view.reported);
  const events: RunEvent[] = [];
  const { executionId } = view;

  let status = view.status;
  if (snapshot.status === 'unknown') {
    log.once(`execution:${snapshot.rawStatus}`, 'Unknown execution status', { executionId, status: snapshot.rawStatus });
  }
  if (snapshot.status !== status && (snapshot.status !== 'unknown' || status === undefined)) {
    events.push({ type: 'status', executionId, status: snapshot.status, ...(status === undefined ? {} : { previous: status }) });
    status = snapshot.status;
  }

  const nodes = new Map(view.nodes);
  moveNodes(executionId, nodes, snapshot.nodes, log, events);
  return { view: { ...view, status, nodes, reported: log.reported }, events, warnings: log.warnings };
}

/**
 * The node transitions an output reading shows: it lists the task nodes with their status (service.md
 * §4.2), the only nodes that execute (§3.2), so a run that reads its output can skip that status read
 * while they run (a content node's `init → finish` shows at the next status read).
 * The execution's own status is not in it and stays as it was. Same rules and order as `diffStatus`.
 */
export function diffNodeStatuses(view: ExecutionView, reading: readonly NodeExecution[]): ViewDiff {
  const log = new WarningLog(view.reported);
  const events: RunEvent[] = [];
  const nodes = new Map(view.nodes);
  moveNodes(view.executionId, nodes, reading, log, events);
  return { view: { ...view, nodes, reported: log.reported }, events, warnings: log.warnings };
}
