// The public surface of flowstream, export by export (DESIGN.md).
export { FlowstreamError, isFlowstreamError } from './errors/flowstream-error.js';
export { WorkflowFailedError, RunTimeoutError, isWorkflowFailedError, isRunTimeoutError } from './errors/run-errors.js';
export type * from './http/model.js';
