import type { RunResult } from '../domain/model.js';
import type { ExecutionView } from './execution-view.js';

/**
 * The `RunResult` of a terminal execution, built from the view so that it says exactly what the
 * events said: each node at its furthest status, each task node of the last output read with every
 * message delivered for it, every file delivered.
 */
export function runResultOf(view: ExecutionView, status: RunResult['status'], canvasId?: string): RunResult {
  const nodes = [...view.nodes.values()];
  const messages = [...view.messages.values()];
  return {
    executionId: view.executionId,
    ...(canvasId === undefined ? {} : { canvasId }),
    status,
    endedBy: status,
    nodes,
    output: view.outputNodes.map((node) => ({
      ...node,
      messages: messages.filter((entry) => entry.nodeId === node.nodeId).map((entry) => entry.message),
    })),
    files: [...view.files],
    failedNodes: nodes.filter((node) => node.status === 'failed'),
    runningNodes: nodes.filter((node) => node.status === 'executing' || node.status === 'waiting'),
  };
}
