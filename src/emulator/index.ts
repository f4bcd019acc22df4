// The public surface of `flowstream/emulator`, export by export.
export { createEmulator } from './emulator.js';
export type { Emulator, WorkflowControls, ExecutionControls, RequestControls, FaultControls } from './emulator.js';
export type { EmulatorCors, EmulatorOptions, Profile } from './options.js';
export { createManualClock, createScaledClock } from './clock.js';
export { clockScheduler } from './scheduler.js';
export { driveClock, type DriveOptions } from './drive-clock.js';
export type { Clock, ManualClock, ScaledClock } from './clock.js';
export type {
  WorkflowDefinition,
  NodeDefinition,
  NodeType,
  MessageDefinition,
  FileDefinition,
  FailureDefinition,
  VariableDefinition,
} from './workflows/definition.js';
export { CONTENT_NODE_TYPES, NO_WORK_NODE_TYPES } from './workflows/definition.js';
export { WorkflowDefinitionError, parseWorkflowDefinition } from './workflows/parse-definition.js';
export type { Workflow, WorkflowNode, WorkflowVariable, ScriptedMessage, ScriptedFile, ScriptedFailure } from './workflows/workflow.js';
export { SAMPLE_WORKFLOWS } from './workflows/samples.js';
export type { StoredWorkflow } from './state/workflow-registry.js';
export type { ExecutionView, NodeView } from './execution-view.js';
export type { ExecutionStatus, NodeStatus } from './engine/snapshot.js';
export type { ResolvedVariable, ResolvedFile } from './state/variables.js';
export type { RequestRecord, RequestFilter } from './state/request-log.js';
export type { EndpointName } from './app/route.js';
export type { FaultSpec, FaultEffect, FaultScope, FaultHandle } from './state/faults.js';
export type { FetchFunction } from './server/in-process-fetch.js';
export { MAX_FILES_PER_UPLOAD, MAX_UPLOAD_FILE_BYTES } from './handlers/upload.js';
