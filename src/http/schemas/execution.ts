import { z } from 'zod';
import type { ExecutionOutput, ExecutionSnapshot, NodeExecution, OutputFile, OutputMessage, OutputNode, StartedExecution } from '../model.js';
import { parseNodeError } from './node-error.js';
import { toExecutionStatus, toMessageType, toNodeStatus } from './status-values.js';

/** The spec marks many strings optional and the service sends `null` for some (PROTOCOL §4.2). */
const looseString = z.string().nullish();

/** Only the keys whose value is defined, so results satisfy `exactOptionalPropertyTypes`. */
function defined<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined | null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null)) as {
    [K in keyof T]?: Exclude<T[K], undefined | null>;
  };
}

/**
 * `POST /openapi/workflow/{canvasId}/run` data. The id is strict: without it nothing can be tracked.
 *
 * @example
 * ```ts
 * startedExecutionSchema.parse({ executionId: 'we-1', status: 'running' }).status; // 'executing'
 * ```
 */
export const startedExecutionSchema: z.ZodType<StartedExecution> = z
  .object({ executionId: z.string().min(1), status: looseString })
  .transform(({ executionId, status }) => {
    const rawStatus = status ?? '';
    return { executionId, status: toExecutionStatus(rawStatus), rawStatus };
  });

const nodeExecutionSchema: z.ZodType<NodeExecution> = z
  .object({ nodeId: z.string(), status: looseString, title: looseString, errorMessage: looseString })
  .transform(({ nodeId, status, title, errorMessage }) => {
    const rawStatus = status ?? '';
    return { nodeId, status: toNodeStatus(rawStatus), rawStatus, ...defined({ title, error: parseNodeError(errorMessage) }) };
  });

/** The status payload's fields, built once: zod compiles an object schema at its first parse, so a schema made per call costs that every poll. */
const snapshotPayloadSchema = z.object({ executionId: looseString, status: looseString, createdAt: looseString, nodeExecutions: z.array(nodeExecutionSchema).nullish() });

/**
 * `GET /openapi/workflow/{executionId}/status` data (PROTOCOL §4.1). `executionId` is optional in the
 * spec; the resource fills in the requested id when it is missing.
 *
 * @example
 * ```ts
 * const snapshot = executionSnapshotSchema('we-1').parse(data);
 * ```
 */
export function executionSnapshotSchema(requestedId: string): z.ZodType<ExecutionSnapshot> {
  return snapshotPayloadSchema.transform(({ executionId, status, createdAt, nodeExecutions }) => {
    const rawStatus = status ?? '';
    return {
      executionId: executionId ?? requestedId,
      status: toExecutionStatus(rawStatus),
      rawStatus,
      ...defined({ createdAt }),
      nodes: nodeExecutions ?? [],
    };
  });
}

const outputMessageSchema: z.ZodType<OutputMessage> = z
  .object({ messageId: z.string(), type: looseString, content: looseString, reasoningContent: looseString })
  .transform(({ messageId, type, content, reasoningContent }) => {
    const rawType = type ?? '';
    // PROTOCOL §4.5: reasoningContent is usually "" and may be null; both read as "".
    return { messageId, type: toMessageType(rawType), rawType, content: content ?? '', reasoningContent: reasoningContent ?? '' };
  });

const outputNodeSchema: z.ZodType<OutputNode> = z
  .object({
    nodeId: z.string(),
    title: looseString,
    status: looseString,
    errorMessage: looseString,
    startTime: looseString,
    endTime: looseString,
    messages: z.array(outputMessageSchema).nullish(),
  })
  .transform(({ nodeId, title, status, errorMessage, startTime, endTime, messages }) => {
    const rawStatus = status ?? '';
    return {
      nodeId,
      status: toNodeStatus(rawStatus),
      rawStatus,
      ...defined({ title, error: parseNodeError(errorMessage), startTime, endTime }),
      messages: messages ?? [],
    };
  });

const outputFileSchema: z.ZodType<OutputFile> = z
  .object({ name: z.string(), type: looseString, size: z.number().nullish(), nodeId: looseString, url: looseString })
  .transform(({ name, type, size, nodeId, url }) => ({ name, type: type ?? '', ...defined({ size, nodeId, url }) }));

/**
 * `GET /openapi/workflow/{executionId}/output` data (PROTOCOL §4.2, §4.6).
 *
 * @example
 * ```ts
 * executionOutputSchema.parse({ output: [], files: [] });
 * ```
 */
export const executionOutputSchema: z.ZodType<ExecutionOutput> = z
  .object({ output: z.array(outputNodeSchema).nullish(), files: z.array(outputFileSchema).nullish() })
  .transform(({ output, files }) => ({ output: output ?? [], files: files ?? [] }));

/**
 * `POST /openapi/workflow/{executionId}/abort` data: `null` (PROTOCOL §1.1); whatever comes is ignored.
 *
 * @example
 * ```ts
 * abortSchema.parse(null); // undefined
 * ```
 */
export const abortSchema: z.ZodType<undefined> = z.unknown().transform(() => undefined);
