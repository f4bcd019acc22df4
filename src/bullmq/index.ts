// flowstream/bullmq: pipelines as BullMQ jobs, run by a fleet of workers.
// Node-only; needs the `bullmq` and `ioredis` packages (optional peer dependencies of flowstream).
export { createPipelineQueue, type PipelineQueue, type PipelineQueueOptions, type StartPipelineOptions } from './pipeline-queue.js';
export { createPipelineWorker, type PipelineWorker, type PipelineWorkerOptions, type PipelineWorkerClient, type PipelineDefinitions } from './pipeline-worker.js';
export type { PipelineQueueEvent } from './pipeline-queue-events.js';
export type { PipelineJobProgress, StepProgress, StepState } from './pipeline-job-progress.js';
export type { PipelineResult, PipelineStatus, StepSummary } from './pipeline-result.js';
export { PipelineJobFailedError, isPipelineJobFailedError } from './pipeline-job-failed-error.js';
export type { RedisOption } from '../redis/connection.js';
