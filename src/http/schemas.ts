// A namespace import, so that a bundler keeps only the zod functions used here.
import * as z from 'zod/mini';
import type {
  ExecutionOutput,
  ExecutionSnapshot,
  ExecutionStatus,
  GeneratedWorkflow,
  MessageType,
  NodeError,
  NodeExecution,
  NodeStatus,
  OutputFile,
  OutputMessage,
  OutputNode,
  PlanTask,
  PlanVariable,
  StartedExecution,
  UploadedFile,
  VariableType,
  WorkflowPlan,
  WorkflowSummary,
} from '../domain/model.js';

/**
 * The service's answers: each endpoint's `data` checked by a zod/mini schema of its shape, then read
 * as the model by a plain function (defaults, lenient statuses, node errors) — the zod schemas check,
 * they do not transform.
 */

/**
 * The message of an issue our schemas can raise, in the words of zod's English locale
 * (`Invalid input: expected string, received undefined`), without the whole locale: its tables
 * (string formats, sizes of maps and files) are for schemas the client does not have.
 */
function issueMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `Invalid input: expected ${typeName(issue.expected, undefined)}, received ${typeName(receivedType(issue.input), issue.input)}`;
    case 'invalid_value':
      return issue.values.length === 1 ? `Invalid input: expected ${primitiveText(issue.values[0])}` : `Invalid option: expected one of ${issue.values.map(primitiveText).join('|')}`;
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array'
        ? `Too small: expected ${issue.origin} to have ${issue.inclusive === true ? '>=' : '>'}${issue.minimum.toString()} ${issue.origin === 'string' ? 'characters' : 'items'}`
        : `Too small: expected ${issue.origin} to be ${issue.inclusive === true ? '>=' : '>'}${issue.minimum.toString()}`;
    // Issues of schemas the client does not have (unions, formats, maxima, records, maps): the locale's generic text.
    case 'too_big':
    case 'invalid_format':
    case 'not_multiple_of':
    case 'unrecognized_keys':
    case 'invalid_union':
    case 'invalid_key':
    case 'invalid_element':
    case 'custom':
      return 'Invalid input';
    default:
      return unexpectedIssue(issue);
  }
}

function unexpectedIssue(issue: never): string {
  return `Invalid input (${String((issue as { code?: unknown }).code)})`;
}

/** What a value is, as zod names it in an issue (`null`, `array`, `nan`, a class's name). */
function receivedType(input: unknown): string {
  if (typeof input === 'number') return Number.isNaN(input) ? 'nan' : 'number';
  if (typeof input !== 'object') return typeof input;
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  const { constructor } = input as { constructor?: { name?: string } };
  return Object.getPrototypeOf(input) !== Object.prototype && typeof constructor?.name === 'string' ? constructor.name : 'object';
}

/** A literal as an issue quotes it. */
function primitiveText(value: unknown): string {
  if (typeof value === 'bigint') return `${value.toString()}n`;
  return typeof value === 'string' ? `"${value}"` : String(value);
}

/** A type's name as zod's English locale writes it. */
function typeName(type: string, input: unknown): string {
  if (type === 'number' && typeof input === 'number' && !Number.isFinite(input)) return String(input);
  return type === 'nan' ? 'NaN' : type;
}

/**
 * How every response is parsed: with English messages, so that a `ResponseValidationError` says what
 * was expected (`Invalid input: expected string, received undefined`). zod/mini loads no locale, and
 * its issues would all read `Invalid input`; the messages go with each parse rather than through
 * `z.config`, which is global and would change the messages of the app's own zod.
 */
export const parseContext: z.core.ParseContext<z.core.$ZodIssue> = { error: issueMessage };

const EXECUTION_STATUSES: ReadonlySet<ExecutionStatus> = new Set<ExecutionStatus>(['init', 'executing', 'finish', 'failed']);
const NODE_STATUSES: ReadonlySet<NodeStatus> = new Set<NodeStatus>(['init', 'waiting', 'executing', 'finish', 'failed']);

/**
 * Reads a raw execution or node status as the model's, with the raw value beside it: the service
 * answers a start with `running`, which the spec does not list, while the execution itself is
 * `executing` (service.md §3.1); a node's `waiting` never occurs on the service but is accepted.
 * Anything unknown becomes `unknown` rather than failing a poll.
 */
function statusOf<S extends string>(raw: string | null | undefined, known: ReadonlySet<S>): { status: S | 'executing' | 'unknown'; rawStatus: string } {
  const rawStatus = raw ?? '';
  return { status: rawStatus === 'running' ? 'executing' : (known as ReadonlySet<string>).has(rawStatus) ? (rawStatus as S) : 'unknown', rawStatus };
}

/** Maps a raw message type (spec §2.5). */
function toMessageType(raw: string): MessageType {
  return raw === 'ai' || raw === 'tool' ? raw : 'unknown';
}

/**
 * Cleans a node's `errorMessage` (service.md §4.3): `"[]"` on success → no error; a JSON-encoded array
 * of strings → its entries joined; plain text (abort, timeout, credits) → kept as is. `raw` always
 * holds what the service sent.
 */
export function parseNodeError(raw: string | null | undefined): NodeError | undefined {
  if (raw === null || raw === undefined || raw.trim() === '') return undefined;
  const messages = jsonMessages(raw) ?? [raw.trim()];
  if (messages.length === 0) return undefined;
  return { message: messages.join('; '), messages, raw };
}

/** The entries of a JSON array, or `undefined` when `raw` is not one. */
function jsonMessages(raw: string): string[] | undefined {
  const text = raw.trim();
  if (!text.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  // service.md §4.3 promises strings. Anything else is shown as JSON, when it can be: an entry nested
  // thousands deep would overflow JSON.stringify's stack, and is then not a message but the raw text.
  const messages: string[] = [];
  for (const entry of parsed as unknown[]) {
    const text = typeof entry === 'string' ? entry : shallowJson(entry);
    if (text === undefined) return undefined;
    if (text.trim() !== '') messages.push(text.trim());
  }
  return messages;
}

const MAX_ENTRY_DEPTH = 32;

/** `JSON.stringify(value)` when `value` nests no deeper than `MAX_ENTRY_DEPTH`, else `undefined`. */
function shallowJson(value: unknown): string | undefined {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth += 1) {
    if (depth > MAX_ENTRY_DEPTH) return undefined;
    level = level.flatMap((item) => (typeof item === 'object' && item !== null ? Object.values(item as Readonly<Record<string, unknown>>) : []));
  }
  return JSON.stringify(value);
}

/**
 * An endpoint's `data` schema: checked, then read as the model. A zod schema is one that reads its
 * data as it is; {@link dataSchema} pairs a zod schema with the function that reads what it checked.
 *
 * @example
 * ```ts
 * const parsed = workflowPlanSchema.safeParse(data, parseContext);
 * if (parsed.success) console.log(parsed.data.tasks.length);
 * ```
 */
export interface DataSchema<T> {
  safeParse(data: unknown, context?: z.core.ParseContext<z.core.$ZodIssue>): { readonly success: true; readonly data: T; readonly error?: never } | { readonly success: false; readonly data?: never; readonly error: z.core.$ZodError };
}

/** `schema`'s checks, then `read` of what passed them. */
function dataSchema<R, T>(schema: z.ZodMiniType<R>, read: (checked: R) => T): DataSchema<T> {
  return {
    safeParse: (data, context) => {
      const parsed = schema.safeParse(data, context);
      return parsed.success ? { success: true, data: read(parsed.data) } : parsed;
    },
  };
}

/** The spec marks many strings optional and the service sends `null` for some (service.md §4.2). */
const looseString = z.nullish(z.string());
/** An id a later call needs: strict. */
const strictId = z.string().check(z.minLength(1));
const texts = z.nullish(z.array(z.string()));

/** Only the keys whose value is defined (not `undefined` or `null`), so results satisfy `exactOptionalPropertyTypes`. */
export function defined<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined | null> } {
  const kept: Record<string, unknown> = {};
  for (const name in fields) {
    const value = fields[name];
    if (value !== undefined && value !== null) kept[name] = value;
  }
  return kept as { [K in keyof T]?: Exclude<T[K], undefined | null> };
}

/** One page of search results; untitled workflows read `Untitled` on the service (service.md §5.1). */
export const workflowSummariesSchema: DataSchema<WorkflowSummary[]> = dataSchema(z.array(z.object({ canvasId: strictId, title: looseString })), (summaries) =>
  summaries.map(({ canvasId, title }) => ({ canvasId, title: title ?? 'Untitled' })),
);

const taskSchema = z.object({
  id: z.string(),
  title: looseString,
  prompt: looseString,
  toolsets: texts,
  // service.md §5.2: task→task edges only, omitted when empty.
  dependentTasks: texts,
});

const VARIABLE_TYPES: ReadonlySet<unknown> = new Set<VariableType>(['string', 'option', 'resource']);

const isVariableType = (value: unknown): value is VariableType => VARIABLE_TYPES.has(value);

const variableSchema = z.object({
  name: z.string(),
  // Checked when read, not by `z.catch(z.enum(…))`: an unknown type is dropped rather than failing
  // the whole plan, and zod/mini's `catch` alone adds about 10 KB (minified) of zod's utilities to
  // the browser bundle.
  variableType: z.unknown(),
  required: z.nullish(z.boolean()),
  options: texts,
});

const planSchema = z.object({ title: looseString, tasks: z.array(taskSchema), variables: z.nullish(z.array(variableSchema)) });

function readTask({ id, title, prompt, toolsets, dependentTasks }: z.output<typeof taskSchema>): PlanTask {
  return { id, title: title ?? '', prompt: prompt ?? '', toolsets: toolsets ?? [], dependentTasks: dependentTasks ?? [] };
}

function readVariable({ name, variableType, required, options }: z.output<typeof variableSchema>): PlanVariable {
  return {
    name,
    ...(isVariableType(variableType) ? { variableType } : {}),
    // service.md §5.2: `required` defaults to false; `options` only when non-empty.
    required: required ?? false,
    ...(options === undefined || options === null ? {} : { options }),
  };
}

function readPlan({ title, tasks, variables }: z.output<typeof planSchema>): WorkflowPlan {
  return { title: title ?? 'Untitled', tasks: tasks.map(readTask), variables: (variables ?? []).map(readVariable) };
}

/** A workflow plan (spec §2.3), from detail. */
export const workflowPlanSchema: DataSchema<WorkflowPlan> = dataSchema(planSchema, readPlan);

/** Copilot generation data (spec §4.8). */
export const generatedWorkflowSchema: DataSchema<GeneratedWorkflow> = dataSchema(z.object({ canvasId: strictId, workflowPlan: planSchema }), ({ canvasId, workflowPlan }) => ({
  canvasId,
  workflowPlan: readPlan(workflowPlan),
}));

/** Upload data (spec §4.7): keys are strict, since a run needs them. */
export const uploadedFilesSchema: DataSchema<UploadedFile[]> = dataSchema(z.object({ files: z.array(z.object({ fileKey: strictId, fileName: z.string() })) }), ({ files }) => files);

/** `POST /openapi/workflow/{canvasId}/run` data. The id is strict: without it nothing can be tracked. */
export const startedExecutionSchema: DataSchema<StartedExecution> = dataSchema(z.object({ executionId: strictId, status: looseString }), ({ executionId, status }) => ({
  executionId,
  ...statusOf(status, EXECUTION_STATUSES),
}));

const nodeExecutionSchema = z.object({ nodeId: z.string(), status: looseString, title: looseString, errorMessage: looseString });

/** The status payload's fields, built once: zod compiles an object schema at its first parse, so a schema made per call costs that every poll. */
const snapshotPayloadSchema = z.object({ executionId: looseString, status: looseString, createdAt: looseString, nodeExecutions: z.nullish(z.array(nodeExecutionSchema)) });

function readNodeExecution({ nodeId, status, title, errorMessage }: z.output<typeof nodeExecutionSchema>): NodeExecution {
  return { nodeId, ...statusOf(status, NODE_STATUSES), ...defined({ title, error: parseNodeError(errorMessage) }) };
}

/** The status data as the service sent it: `executionId` may be missing (see `withRequestedId`). */
export type SnapshotData = Omit<ExecutionSnapshot, 'executionId'> & { readonly executionId?: string };

/**
 * `GET /openapi/workflow/{executionId}/status` data (service.md §4.1), one schema for every execution:
 * `executionId` is optional in the spec, and `withRequestedId` fills in the requested id when it is
 * missing. Not a schema per request: a run's next read waits in the budget holding its request.
 */
export const snapshotDataSchema: DataSchema<SnapshotData> = dataSchema(snapshotPayloadSchema, ({ executionId, status, createdAt, nodeExecutions }) => ({
  ...defined({ executionId }),
  ...statusOf(status, EXECUTION_STATUSES),
  ...defined({ createdAt }),
  nodes: (nodeExecutions ?? []).map(readNodeExecution),
}));

/** The snapshot of the execution asked for: the service's id, or the requested one when it sent none. */
export function withRequestedId(data: SnapshotData, requestedId: string): ExecutionSnapshot {
  const { executionId = requestedId, ...rest } = data;
  return { executionId, ...rest };
}

const outputMessageSchema = z.object({ messageId: z.string(), type: looseString, content: looseString, reasoningContent: looseString });

const outputNodeSchema = z.object({
  nodeId: z.string(),
  title: looseString,
  status: looseString,
  errorMessage: looseString,
  startTime: looseString,
  endTime: looseString,
  messages: z.nullish(z.array(outputMessageSchema)),
});

const outputFileSchema = z.object({ name: z.string(), type: looseString, size: z.nullish(z.number()), nodeId: looseString, url: looseString });

function readMessage({ messageId, type, content, reasoningContent }: z.output<typeof outputMessageSchema>): OutputMessage {
  const rawType = type ?? '';
  // service.md §4.5: reasoningContent is usually "" and may be null; both read as "".
  return { messageId, type: toMessageType(rawType), rawType, content: content ?? '', reasoningContent: reasoningContent ?? '' };
}

function readOutputNode({ nodeId, title, status, errorMessage, startTime, endTime, messages }: z.output<typeof outputNodeSchema>): OutputNode {
  return {
    nodeId,
    ...statusOf(status, NODE_STATUSES),
    ...defined({ title, error: parseNodeError(errorMessage), startTime, endTime }),
    messages: (messages ?? []).map(readMessage),
  };
}

function readOutputFile({ name, type, size, nodeId, url }: z.output<typeof outputFileSchema>): OutputFile {
  return { name, type: type ?? '', ...defined({ size, nodeId, url }) };
}

/** `GET /openapi/workflow/{executionId}/output` data (service.md §4.2, §4.6). */
export const executionOutputSchema: DataSchema<ExecutionOutput> = dataSchema(
  z.object({ output: z.nullish(z.array(outputNodeSchema)), files: z.nullish(z.array(outputFileSchema)) }),
  ({ output, files }) => ({ output: (output ?? []).map(readOutputNode), files: (files ?? []).map(readOutputFile) }),
);

/** `POST /openapi/workflow/{executionId}/abort` data: `null` (service.md §1.1); whatever comes is ignored. */
export const abortSchema: DataSchema<undefined> = dataSchema(z.unknown(), () => undefined);
