/** The error taxonomy: one root, one class per failure kind, cross-realm guards. */
export { FlowstreamError, isFlowstreamError, type FlowstreamErrorOptions } from './flowstream-error.js';
export {
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
  type ApiErrorDetails,
  type RateLimitScope,
} from './api-errors.js';
export {
  NetworkError,
  RedirectError,
  ResponseTooLargeError,
  TimeoutError,
  isNetworkError,
  isRedirectError,
  isResponseTooLargeError,
  isTimeoutError,
  type TransportErrorDetails,
} from './transport-errors.js';
export {
  InvalidArgumentError,
  ResponseValidationError,
  isInvalidArgumentError,
  isResponseValidationError,
  type ResponseIssue,
} from './validation-errors.js';
export { DownloadError, isDownloadError } from './download-error.js';
export { ConcurrencyLimitError, isConcurrencyLimitError } from './concurrency-limit-error.js';
export { StepInDoubtError, isStepInDoubtError } from './step-in-doubt-error.js';
export { StartInDoubtError, isStartInDoubtError } from './start-in-doubt-error.js';
export { UploadIncompleteError, isUploadIncompleteError } from './upload-incomplete-error.js';
export { errorFromAnswer, type FailedAnswer, type FailureBody } from './error-factory.js';
export { RunTimeoutError, WorkflowFailedError, isRunTimeoutError, isWorkflowFailedError } from './run-errors.js';
export { RelayError, isRelayError } from './relay-error.js';
