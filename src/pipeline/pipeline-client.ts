import { InvalidArgumentError } from '../errors/validation-errors.js';
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

/**
 * Refuses what is not a client at the call, with `InvalidArgumentError` (plain JavaScript can pass
 * anything): otherwise it fails as a `TypeError` once the pipeline runs.
 */
export function checkPipelineClient(client: PipelineClient): void {
  const given: unknown = client;
  if (typeof given !== 'object' || given === null || typeof (given as Partial<PipelineClient>).run !== 'function') {
    throw new InvalidArgumentError('client', 'must be a flowstream client (createClient)');
  }
}
