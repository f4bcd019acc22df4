import { nodeStateAt } from '../engine/snapshot.js';
import type { AppContext } from '../app/context.js';
import type { Reply } from '../app/reply.js';
import { frameworkError } from '../app/reply.js';

/**
 * `GET /v1/drive/file/public/{fileId}/{name}` — service.md §4.6: no Authorization needed. A file is
 * published once its node is `finish`.
 */
export function handlePublicFile(context: AppContext, fileId: string, name: string): Reply {
  const found = context.executions.findFile(fileId);
  const fate = found?.record.timeline.fates.get(found.file.nodeId);
  if (found === undefined || fate === undefined || found.file.name !== name || nodeStateAt(fate, context.clock.now()).status !== 'finish') {
    return frameworkError(404, 'File not found');
  }
  return {
    status: 200,
    body: { bytes: found.file.bytes, contentType: found.file.type },
    headers: {},
    subject: { executionId: found.record.executionId, canvasId: found.record.workflow.canvasId },
  };
}
