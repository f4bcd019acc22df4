/** The typed HTTP client, the plain calls: what the composition root and `src/index.ts` export. */
export { createHttpClient, type HttpClient } from './client.js';
export { normalizeOptions, type HttpOptions, type ResolvedOptions } from './options.js';
export {
  COPILOT_LOCALES,
  UPLOAD_BATCH_SIZE,
  WORKFLOW_ORDERS,
  type CopilotApi,
  type CopilotLocale,
  type FilesApi,
  type GenerateRequest,
  type ListQuery,
  type SearchQuery,
  type WorkflowOrder,
  type WorkflowsApi,
} from './resources.js';
export { MAX_UPLOAD_BYTES, type NamedBlob, type NamedFileData, type UploadSource } from './upload-source.js';
export { downloadFile, openFile, type DownloadOptions } from './download.js';
export { decideRetry, readRateLimit, type RetryDecision, type RetryInput } from './transport.js';
export { parseNodeError } from './schemas.js';
export type * from './calls.js';
