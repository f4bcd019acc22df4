// Pipelines: chaining, fan-out and DAGs of runs, passing text, fields and files along.
export type { PipelineClient } from './pipeline-client.js';
export { thenRun, type ThenRunOptions } from './then-run.js';
export type { ChainInput, StepContext } from './step-input.js';
export { runEach, type RunEachOptions, type EachResult } from './run-each.js';
export { runPipeline } from './run-pipeline.js';
export type { PipelineDefinition, PipelineStep, StepCanvasIds, PipelineOptions, StepResults, StepFailurePolicy } from './pipeline-definition.js';
export type { PipelineEvent, StepEvent, CheckpointEvent, PipelineFinishedEvent, PipelineDetachedEvent, StepOutcome } from './pipeline-events.js';
export { createMemoryCheckpointStore, type CheckpointStore, type CheckpointStoreEvent, type StoredPipeline } from './checkpoint-store.js';
export type { PipelineCheckpoint, StepCheckpoint, StepCheckpointStatus } from './pipeline-checkpoint.js';
export { CorruptCheckpointError, isCorruptCheckpointError } from './corrupt-checkpoint-error.js';
export { retryFailedWorkflow } from './retry-failed-workflow.js';
export { inInputOrder } from './in-input-order.js';
export { outputText, type OutputTextOptions } from './output-text.js';
export { outputFields } from './output-fields.js';
export { outputFile } from './output-file.js';
export { transferFiles, type TransferOptions, type OutputFileReader } from './transfer-files.js';
