/**
 * A third process that cancels pipelines (bundled by fleet.ts, or `node --import tsx test/bullmq/cancel-process.ts`), with
 * REDIS_URL, PREFIX and PIPELINE_IDS (comma-separated) in its environment. It runs none of them.
 */
import { createPipelineQueue } from '../../src/bullmq/index.js';

const queue = createPipelineQueue({ connection: process.env['REDIS_URL'] ?? '', prefix: process.env['PREFIX'] ?? '' });
for (const pipelineId of (process.env['PIPELINE_IDS'] ?? '').split(',')) await queue.cancel(pipelineId);
await queue.close();
console.log('cancelled');
