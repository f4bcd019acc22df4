import { executionStatusAt, nodeStateAt } from '../engine/snapshot.js';
import type { Profile } from '../options.js';
import type { ExecutionRecord } from '../state/execution-store.js';
import { isTaskNode } from '../workflows/workflow.js';

/**
 * The `data` of the status endpoint (service.md §4.1): every node of every type, parents before
 * children with ties by nodeId (the order the workflow is kept in).
 */
export function statusPayload(record: ExecutionRecord, at: number): Record<string, unknown> {
  return {
    executionId: record.executionId,
    status: executionStatusAt(record.timeline, at),
    createdAt: new Date(record.timeline.createdAt).toISOString(),
    nodeExecutions: record.workflow.nodes.map((node) => {
      const fate = record.timeline.fates.get(node.id);
      const state = fate === undefined ? undefined : nodeStateAt(fate, at);
      const errorMessage = isTaskNode(node) ? state?.errorMessage : undefined;
      return { nodeId: node.id, status: state?.status ?? 'init', title: node.title, ...(errorMessage === undefined ? {} : { errorMessage }) };
    }),
  };
}

/**
 * service.md §3.1: run answers `running` on the service, a value the spec does not list; the `spec`
 * profile answers the documented status of the execution at that moment.
 */
export function runPayload(record: ExecutionRecord, at: number, profile: Profile): Record<string, unknown> {
  return { executionId: record.executionId, status: profile === 'service' ? 'running' : executionStatusAt(record.timeline, at) };
}
