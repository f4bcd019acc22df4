/** The typed HTTP client, the plain calls: what the composition root and `src/index.ts` export. */
export { createHttpClient, type HttpClient } from './client.js';
export { normalizeOptions, type HttpOptions, type ResolvedOptions } from './options.js';
export { WORKFLOW_ORDERS, type ListQuery, type SearchQuery, type WorkflowOrder, type WorkflowsApi } from './workflows.js';
export { UPLOAD_BATCH_SIZE, type FilesApi } from './files.js';
export { MAX_UPLOAD_BYTES, type NamedFileData, type UploadSource } from './upload-source.js';
export { COPILOT_LOCALES, type CopilotApi, type CopilotLocale, type GenerateRequest } from './copilot.js';
export { downloadFile, openFile, type DownloadOptions } from './download.js';
export { decideRetry, type RetryDecision, type RetryInput } from './retry-decision.js';
export { readRateLimit } from './rate-limit-headers.js';
export { parseNodeError } from './schemas/node-error.js';
export type * from './calls.js';
