import type { FilesApi } from '../http/resources.js';
import type { Runs } from '../runs/runs.js';
import type { PipelineTelemetryHook } from './pipeline-telemetry.js';

/**
 * What a pipeline needs of a client: its reactive runs and its file uploads. A whole `Client` fits;
 * so does a test double. Every request still goes through that client's one request budget.
 *
 * @example
 * ```ts
 * const client: PipelineClient = createClient({ apiKey, baseUrl });
 * ```
 */
export interface PipelineClient extends Runs {
  readonly files: FilesApi;
  /** Where pipelines over this client report themselves and their steps (`ClientOptions.telemetry`). */
  readonly telemetry?: PipelineTelemetryHook | undefined;
}
