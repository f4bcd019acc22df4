import type { ExecutionsApi } from './calls.js';
import { normalizeOptions, type HttpOptions } from './options.js';
import { createCopilotApi, createExecutionsApi, createFilesApi, createWorkflowsApi, type CopilotApi, type FilesApi, type WorkflowsApi } from './resources.js';
import { createTransport } from './transport.js';

/**
 * The plain Promise API of the Workflow API. `createClient` adds the
 * reactive `run`/`watch` on top of it.
 *
 * @example
 * ```ts
 * const http: HttpClient = createHttpClient({ apiKey, baseUrl });
 * const snapshot = await http.executions.status('we-…');
 * ```
 */
export interface HttpClient {
  readonly workflows: WorkflowsApi;
  readonly executions: ExecutionsApi;
  readonly files: FilesApi;
  readonly copilot: CopilotApi;
}

/**
 * Creates the typed HTTP client: one ky instance with the base URL, `Authorization: Bearer`, a user
 * agent and per-endpoint timeouts; every call is checked before sending, retried where safe, gated by
 * `options.gate`, validated by zod and failed with a typed error. The key is held in a closure only,
 * so neither the client nor its errors ever show it.
 */
export function createHttpClient(options: HttpOptions): HttpClient {
  const resolved = normalizeOptions(options);
  const transport = createTransport(options.apiKey, resolved);
  const uploadedKeys = new Set<string>();
  return Object.freeze({
    workflows: createWorkflowsApi(transport),
    executions: createExecutionsApi({ transport, logger: resolved.logger, uploadedKeys }),
    files: createFilesApi(transport, uploadedKeys),
    copilot: createCopilotApi(transport, resolved.logger),
  });
}
