import type { OutputMessage, RunResult } from '../domain/model.js';
import type { ExecutionView } from './execution-view.js';

/**
 * The `RunResult` of a terminal execution, built from the view so that it says exactly what the
 * events said: each node at its furthest status, each task node of the last output read with every
 * message delivered for it, every file delivered.
 */
export function runResultOf(view: ExecutionView, status: RunResult['status'], canvasId?: string): RunResult {
  const nodes = [...view.nodes.values()];
  // Grouped once, in first-seen order: a result of n nodes and messages costs O(n).
  const messages = new Map<string, OutputMessage[]>();
  for (const { nodeId, message } of view.messages.values()) {
    const ofNode = messages.get(nodeId);
    if (ofNode === undefined) messages.set(nodeId, [message]);
    else ofNode.push(message);
  }
  return {
    executionId: view.executionId,
    ...(canvasId === undefined ? {} : { canvasId }),
    status,
    endedBy: status,
    nodes,
    output: view.outputNodes.map((node) => ({
      ...node,
      messages: messages.get(node.nodeId) ?? [],
    })),
    files: [...view.files],
    failedNodes: nodes.filter((node) => node.status === 'failed'),
    runningNodes: nodes.filter((node) => node.status === 'executing' || node.status === 'waiting'),
  };
}
