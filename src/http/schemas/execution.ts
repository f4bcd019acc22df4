import * as z from 'zod/mini';
import type { ExecutionOutput, ExecutionSnapshot, NodeExecution, OutputFile, OutputMessage, OutputNode, StartedExecution } from '../../domain/model.js';
import { parseNodeError } from './node-error.js';
import { toExecutionStatus, toMessageType, toNodeStatus } from './status-values.js';

/** The spec marks many strings optional and the service sends `null` for some (service.md §4.2). */
const looseString = z.nullish(z.string());

/** Only the keys whose value is defined, so results satisfy `exactOptionalPropertyTypes`. */
function defined<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined | null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null)) as {
    [K in keyof T]?: Exclude<T[K], undefined | null>;
  };
}

/** `POST /openapi/workflow/{canvasId}/run` data. The id is strict: without it nothing can be tracked. */
export const startedExecutionSchema: z.ZodMiniType<StartedExecution> = z.pipe(
  z.object({ executionId: z.string().check(z.minLength(1)), status: looseString }),
  z.transform(({ executionId, status }) => {
    const rawStatus = status ?? '';
    return { executionId, status: toExecutionStatus(rawStatus), rawStatus };
  }),
);

const nodeExecutionSchema: z.ZodMiniType<NodeExecution> = z.pipe(
  z.object({ nodeId: z.string(), status: looseString, title: looseString, errorMessage: looseString }),
  z.transform(({ nodeId, status, title, errorMessage }) => {
    const rawStatus = status ?? '';
    return { nodeId, status: toNodeStatus(rawStatus), rawStatus, ...defined({ title, error: parseNodeError(errorMessage) }) };
  }),
);

/** The status payload's fields, built once: zod compiles an object schema at its first parse, so a schema made per call costs that every poll. */
const snapshotPayloadSchema = z.object({ executionId: looseString, status: looseString, createdAt: looseString, nodeExecutions: z.nullish(z.array(nodeExecutionSchema)) });

/**
 * `GET /openapi/workflow/{executionId}/status` data (service.md §4.1). `executionId` is optional in the
 * spec; the resource fills in the requested id when it is missing.
 */
export function executionSnapshotSchema(requestedId: string): z.ZodMiniType<ExecutionSnapshot> {
  return z.pipe(
    snapshotPayloadSchema,
    z.transform(({ executionId, status, createdAt, nodeExecutions }) => {
      const rawStatus = status ?? '';
      return {
        executionId: executionId ?? requestedId,
        status: toExecutionStatus(rawStatus),
        rawStatus,
        ...defined({ createdAt }),
        nodes: nodeExecutions ?? [],
      };
    }),
  );
}

const outputMessageSchema: z.ZodMiniType<OutputMessage> = z.pipe(
  z.object({ messageId: z.string(), type: looseString, content: looseString, reasoningContent: looseString }),
  z.transform(({ messageId, type, content, reasoningContent }) => {
    const rawType = type ?? '';
    // service.md §4.5: reasoningContent is usually "" and may be null; both read as "".
    return { messageId, type: toMessageType(rawType), rawType, content: content ?? '', reasoningContent: reasoningContent ?? '' };
  }),
);

const outputNodeSchema: z.ZodMiniType<OutputNode> = z.pipe(
  z.object({
    nodeId: z.string(),
    title: looseString,
    status: looseString,
    errorMessage: looseString,
    startTime: looseString,
    endTime: looseString,
    messages: z.nullish(z.array(outputMessageSchema)),
  }),
  z.transform(({ nodeId, title, status, errorMessage, startTime, endTime, messages }) => {
    const rawStatus = status ?? '';
    return {
      nodeId,
      status: toNodeStatus(rawStatus),
      rawStatus,
      ...defined({ title, error: parseNodeError(errorMessage), startTime, endTime }),
      messages: messages ?? [],
    };
  }),
);

const outputFileSchema: z.ZodMiniType<OutputFile> = z.pipe(
  z.object({ name: z.string(), type: looseString, size: z.nullish(z.number()), nodeId: looseString, url: looseString }),
  z.transform(({ name, type, size, nodeId, url }) => ({ name, type: type ?? '', ...defined({ size, nodeId, url }) })),
);

/** `GET /openapi/workflow/{executionId}/output` data (service.md §4.2, §4.6). */
export const executionOutputSchema: z.ZodMiniType<ExecutionOutput> = z.pipe(
  z.object({ output: z.nullish(z.array(outputNodeSchema)), files: z.nullish(z.array(outputFileSchema)) }),
  z.transform(({ output, files }) => ({ output: output ?? [], files: files ?? [] })),
);

/** `POST /openapi/workflow/{executionId}/abort` data: `null` (service.md §1.1); whatever comes is ignored. */
export const abortSchema: z.ZodMiniType<undefined> = z.pipe(z.unknown(), z.transform(() => undefined));
