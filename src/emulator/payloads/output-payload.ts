import type { PartialOutputMode } from '../engine/messages.js';
import { visibleMessages } from '../engine/messages.js';
import { nodeStateAt } from '../engine/snapshot.js';
import type { ExecutionRecord } from '../state/execution-store.js';
import { isTaskNode } from '../workflows/workflow.js';
import { publicFileUrl } from './public-file-url.js';

const iso = (at: number | undefined): string | undefined => (at === undefined ? undefined : new Date(at).toISOString());

/** The `data` of the output endpoint (service.md §4.2, §4.5, §4.6). */
export function outputPayload(record: ExecutionRecord, at: number, mode: PartialOutputMode, baseUrl: string): Record<string, unknown> {
  const finished = new Set<string>();
  // service.md §4.2: only task nodes, the ones that produce messages.
  const output = record.workflow.nodes.filter(isTaskNode).map((node) => {
    const fate = record.timeline.fates.get(node.id);
    const state = nodeStateAt(fate ?? { outcome: 'blocked' }, at);
    if (state.status === 'finish') finished.add(node.id);
    const ids = record.messageIds.get(node.id) ?? [];
    const startTime = iso(state.startAt);
    const endTime = iso(state.endAt);
    return {
      nodeId: node.id,
      title: node.title,
      status: state.status,
      // service.md §4.2: `errorMessage` is null until the node has ended.
      errorMessage: state.errorMessage ?? null,
      ...(startTime === undefined ? {} : { startTime }),
      ...(endTime === undefined ? {} : { endTime }),
      messages: visibleMessages(node, state, at, mode).map((message) => ({
        messageId: ids[message.index] ?? '',
        content: message.content,
        reasoningContent: message.reasoning,
        type: message.type,
      })),
    };
  });
  // service.md §4.6: files only for nodes in `finish`.
  const files = record.files
    .filter((file) => finished.has(file.nodeId))
    .map((file) => ({ name: file.name, type: file.type, size: file.bytes.byteLength, nodeId: file.nodeId, url: publicFileUrl(baseUrl, file) }));
  return { output, files };
}
