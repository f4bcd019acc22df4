import type { ExecutionStatus, NodeStatus } from './engine/snapshot.js';
import { executionStatusAt, nodeStateAt } from './engine/snapshot.js';
import type { ExecutionRecord } from './state/execution-store.js';
import type { ResolvedVariable } from './state/variables.js';
import type { NodeType } from './workflows/definition.js';

/** The full internal view of an execution at one instant, for assertions in tests. Times are emulator ms. */
export interface ExecutionView {
  readonly executionId: string;
  readonly canvasId: string;
  readonly status: ExecutionStatus;
  readonly createdAt: number;
  /** When the status turned terminal; undefined while executing. */
  readonly settledAt: number | undefined;
  readonly abortedAt: number | undefined;
  /** The run's variables as the service read them (service.md §5.5). */
  readonly variables: readonly ResolvedVariable[];
  /** Every node, parents before children. */
  readonly nodes: readonly NodeView[];
}

export interface NodeView {
  readonly nodeId: string;
  readonly type: NodeType;
  readonly title: string;
  readonly status: NodeStatus;
  readonly startedAt: number | undefined;
  readonly endedAt: number | undefined;
  readonly errorMessage: string | undefined;
}

export function viewExecution(record: ExecutionRecord, at: number): ExecutionView {
  const status = executionStatusAt(record.timeline, at);
  return {
    executionId: record.executionId,
    canvasId: record.workflow.canvasId,
    status,
    createdAt: record.timeline.createdAt,
    settledAt: status === 'executing' ? undefined : record.timeline.settledAt,
    abortedAt: record.timeline.abortedAt,
    variables: record.variables,
    nodes: record.workflow.nodes.map((node) => {
      const state = nodeStateAt(record.timeline.fates.get(node.id) ?? { outcome: 'blocked' }, at);
      return {
        nodeId: node.id,
        type: node.type,
        title: node.title,
        status: state.status,
        startedAt: state.startAt,
        endedAt: state.endAt,
        errorMessage: state.errorMessage,
      };
    }),
  };
}
