// The public surface of flowstream, export by export.

// The client
export { createClient, type Client, type ClientOptions, type BudgetView, type StateEventsOptions, type ClientTelemetry, type TelemetryTarget } from './client.js';
export type { RequestTelemetry, RequestTelemetryEnd, RequestTelemetryHook, RequestTelemetryStart } from './domain/telemetry.js';
export type { RunTelemetry, RunTelemetryEnd, RunTelemetryHook, RunTelemetryStart } from './runs/run-lifecycle.js';
export type {
  PipelineTelemetry,
  PipelineTelemetryEnd,
  PipelineTelemetryHook,
  PipelineTelemetryOptions,
  PipelineTelemetryStart,
  StepTelemetry,
  StepTelemetryEnd,
  StepTelemetryStart,
} from './pipeline/pipeline-telemetry.js';
export { DEFAULTS, type RetryOptions, type TimeoutOptions, type PollInterval, type RequestBudgetOptions, type AccountBudgetOptions } from './domain/options.js';

// Runs as Observables
export type { RunEvent, RunEventType, RunEventOf, StartedEvent, SnapshotEvent, StatusEvent, NodeEvent, MessageEvent, FileEvent, ConnectionEvent, FinishedEvent } from './runs/events.js';
export type { RunInput, Runs, RunHandles, RunAborts } from './runs/runs.js';
export type { RunHandle, StartRunOptions } from './runs/runs.js';
export type { FailedBranches, RunOptions } from './runs/run-lifecycle.js';
export { checkVariablesAgainstPlan } from './runs/run-lifecycle.js';
export { planSchema, type PlanSchema, type VariableSchema } from './domain/plan-schema.js';
export type { Workflows, FileKey, CanvasId, WorkflowVariables, WorkflowInput, WorkflowArguments } from './domain/workflows.js';
export { DEFAULT_POLL_INTERVAL } from './runs/poll.js';
export type { OutputMode } from './runs/poll.js';
export { ofType } from './runs/events.js';
export { toRunState, type RunStateOptions } from './runs/run-state.js';
export { sampleRunState } from './runs/run-state.js';
export { runStore, type RunStore, type RunStoreOptions } from './runs/run-state.js';
export { type AcquireOptions, createRunLimiter, type RunLimiter, type RunLimiterOptions } from './runs/run-limiter.js';
export type { RunState, NodeState, MessageState, Reconnecting, TaskProgress } from './runs/run-state.js';
export { runResult } from './runs/events.js';
export { shareRun } from './runs/run-hub.js';
export { createRunHub, type RunHub } from './runs/run-hub.js';
export { type ClaimOptions, createMemoryIdempotencyStore, type IdempotencyClaim, type IdempotencyStore, type MemoryIdempotencyStoreOptions } from './runs/idempotency.js';
export { toAsyncIterable } from './runs/events.js';
export { fromAbortable } from './runs/run-lifecycle.js';
export { connectRun, type ConnectRunOptions } from './runs/connect-run.js';

// Pipelines
export {
  thenRun,
  runEach,
  runPipeline,
  retryFailedWorkflow,
  inInputOrder,
  outputText,
  outputFields,
  outputFile,
  transferFiles,
  createMemoryCheckpointStore,
  CorruptCheckpointError,
  isCorruptCheckpointError,
} from './pipeline/index.js';
export type {
  PipelineClient,
  ThenRunOptions,
  ChainInput,
  StepContext,
  RunEachOptions,
  EachResult,
  PipelineDefinition,
  PipelineStep,
  StepCanvasIds,
  PipelineOptions,
  StepResults,
  StepFailurePolicy,
  PipelineEvent,
  StepEvent,
  CheckpointEvent,
  PipelineFinishedEvent,
  PipelineDetachedEvent,
  CheckpointStore,
  CheckpointStoreEvent,
  StoredPipeline,
  StepOutcome,
  PipelineCheckpoint,
  StepCheckpoint,
  StepCheckpointStatus,
  OutputTextOptions,
  TransferOptions,
  OutputFileReader,
} from './pipeline/index.js';

// Plain calls, files and the domain model
export type { HttpClient, WorkflowsApi, SearchQuery, ListQuery, WorkflowOrder, FilesApi, UploadSource, NamedBlob, NamedFileData, CopilotApi, CopilotLocale, GenerateRequest, DownloadOptions } from './http/index.js';
export { WORKFLOW_ORDERS, COPILOT_LOCALES, UPLOAD_BATCH_SIZE, MAX_UPLOAD_BYTES, downloadFile, openFile } from './http/index.js';
export type {
  ExecutionStatus,
  NodeStatus,
  MessageType,
  NodeError,
  StartedExecution,
  NodeExecution,
  ExecutionSnapshot,
  OutputMessage,
  OutputNode,
  OutputFile,
  ExecutionOutput,
  WorkflowSummary,
  VariableType,
  PlanTask,
  PlanVariable,
  WorkflowPlan,
  UploadedFile,
  GeneratedWorkflow,
  VariableValue,
  Variables,
  Logger,
  RunEnding,
  RunResult,
} from './domain/model.js';
export type { CallOptions, StartOptions, ExecutionsApi } from './http/calls.js';
export type { Endpoint, RequestPriority, CallPriority } from './domain/endpoints.js';
export type { RateLimitInfo } from './domain/requests.js';

// The request budget
export { createAccountBudget, createDurationModel } from './budget/index.js';
export type { DurationModelOptions } from './budget/index.js';
export type { DurationEstimate, DurationModel, DurationsJson, DurationsView, NodeDurations } from './domain/durations.js';
export type { AccountBudget, BudgetState, DayView, KeyCadence, ReadNeed, ServerView } from './budget/index.js';

// Errors
export {
  FlowstreamError,
  isFlowstreamError,
  ApiError,
  AuthenticationError,
  ConflictError,
  InsufficientCreditsError,
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionError,
  RateLimitError,
  ServerError,
  isApiError,
  isAuthenticationError,
  isConflictError,
  isInsufficientCreditsError,
  isInvalidRequestError,
  isNotFoundError,
  isPayloadTooLargeError,
  isPermissionError,
  isRateLimitError,
  isServerError,
  NetworkError,
  TimeoutError,
  isNetworkError,
  isTimeoutError,
  RedirectError,
  isRedirectError,
  ResponseTooLargeError,
  isResponseTooLargeError,
  InvalidArgumentError,
  ResponseValidationError,
  isInvalidArgumentError,
  isResponseValidationError,
  DownloadError,
  isDownloadError,
  ConcurrencyLimitError,
  isConcurrencyLimitError,
  StepInDoubtError,
  isStepInDoubtError,
  StartInDoubtError,
  isStartInDoubtError,
  UploadIncompleteError,
  isUploadIncompleteError,
  WorkflowFailedError,
  RunTimeoutError,
  isWorkflowFailedError,
  isRunTimeoutError,
  RelayError,
  isRelayError,
} from './errors/index.js';
export type { FlowstreamErrorOptions, ApiErrorDetails, RateLimitScope, TransportErrorDetails, ResponseIssue } from './errors/index.js';
