import { InvalidArgumentError } from '../errors/validation-errors.js';

/** The one BullMQ queue of pipeline jobs (per prefix); BullMQ refuses `:` in queue names. */
export const PIPELINE_QUEUE_NAME = 'flowstream-pipelines';

/** BullMQ's own default prefix, so that its dashboards find the queue where they look. */
export const DEFAULT_PREFIX = 'bull';

/**
 * What a pipeline job carries: the input its definition is built from. The job's name is the
 * definition's name, and its id the pipeline's id.
 */
export interface PipelineJobData {
  readonly input: unknown;
}

/**
 * The id a pipeline's checkpoint has in the store: namespaced by the BullMQ prefix, so two
 * applications that share a Redis under different prefixes never resume each other's pipelines.
 */
export function storedPipelineId(prefix: string, pipelineId: string): string {
  return `${prefix}:${pipelineId}`;
}

/**
 * A pipeline id is the BullMQ job id: a non-empty string, neither a whole number nor holding a `:`
 * (BullMQ refuses both in custom job ids).
 */
export function checkPipelineId(pipelineId: string): string {
  if (typeof pipelineId !== 'string' || pipelineId === '') throw new InvalidArgumentError('pipelineId', 'must be a non-empty string');
  if (pipelineId.includes(':')) throw new InvalidArgumentError('pipelineId', `must not contain ":" (BullMQ job ids), got "${pipelineId}"`);
  if (String(Number.parseInt(pipelineId, 10)) === pipelineId) throw new InvalidArgumentError('pipelineId', `must not be a whole number (BullMQ job ids), got "${pipelineId}"`);
  return pipelineId;
}
