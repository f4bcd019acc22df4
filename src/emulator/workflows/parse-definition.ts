import { z } from 'zod';
import { assertNever } from '../assert-never.js';
import { newCanvasId } from '../ids.js';
import { NO_WORK_NODE_TYPES } from './definition.js';
import { topologicalOrder } from './topological-order.js';
import { fillerPng } from './filler-image.js';
import type { ScriptedFailure, ScriptedFile, ScriptedMessage, Workflow, WorkflowNode } from './workflow.js';

/** Thrown for a workflow definition that cannot run: bad shape, duplicate ids, unknown parents, cycles. */
export class WorkflowDefinitionError extends Error {
  override readonly name = 'WorkflowDefinitionError';
}

const DEFAULT_TASK_DURATION_MS = 5_000;
const DEFAULT_FAILURE_ERROR = 'Request timeout. Please try again later.';

const durationSchema = z.number().int().nonnegative();
/** Finite by zod's default (NaN and ±Infinity refused); above 3 a log-normal is mostly one long tail. */
const durationCvSchema = z.number().min(0).max(3);

const nodeSchema = z.strictObject({
  id: z.string().min(1),
  type: z.enum(['task', ...NO_WORK_NODE_TYPES]).optional(),
  title: z.string().optional(),
  prompt: z.string().optional(),
  toolsets: z.array(z.string()).optional(),
  parents: z.array(z.string()).optional(),
  durationMs: durationSchema.optional(),
  durationCv: durationCvSchema.optional(),
  messages: z
    .array(
      z.strictObject({
        content: z.string(),
        reasoning: z.string().nullable().optional(),
        type: z.enum(['ai', 'tool']).optional(),
        atMs: durationSchema.optional(),
      }),
    )
    .optional(),
  files: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        type: z.string().min(1),
        content: z.string().optional(),
        size: z.number().int().nonnegative().optional(),
      }),
    )
    .optional(),
  failure: z
    .discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('error'), errors: z.array(z.string()).min(1).optional(), atMs: durationSchema.optional() }),
      z.strictObject({ kind: z.literal('credit') }),
    ])
    .optional(),
});

const definitionSchema = z.strictObject({
  canvasId: z.string().min(1).optional(),
  title: z.string().optional(),
  nodes: z.array(nodeSchema),
  variables: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        variableType: z.enum(['string', 'option', 'resource']).optional(),
        required: z.boolean().optional(),
        options: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});

type NodeInput = z.infer<typeof nodeSchema>;

/**
 * Validates a definition (a `WorkflowDefinition`, or parsed JSON in that format) and fills in
 * its defaults.
 *
 * @throws WorkflowDefinitionError with every problem found, each with its path.
 */
export function parseWorkflowDefinition(input: unknown): Workflow {
  const parsed = definitionSchema.safeParse(input);
  if (!parsed.success) throw new WorkflowDefinitionError(`Invalid workflow definition:\n${z.prettifyError(parsed.error)}`);
  const definition = parsed.data;
  const where = `workflow ${definition.canvasId ?? definition.title ?? '(untitled)'}`;

  const ids = new Set<string>();
  for (const node of definition.nodes) {
    if (ids.has(node.id)) throw new WorkflowDefinitionError(`${where}: duplicate node id "${node.id}"`);
    ids.add(node.id);
  }
  const nodes = definition.nodes.map((node) => normalizeNode(node, where));
  for (const node of nodes) {
    for (const parent of node.parents) {
      if (!ids.has(parent)) throw new WorkflowDefinitionError(`${where}: node "${node.id}" has unknown parent "${parent}"`);
      if (parent === node.id) throw new WorkflowDefinitionError(`${where}: node "${node.id}" depends on itself`);
    }
  }
  const ordered = topologicalOrder(nodes);
  if (!ordered.ok) throw new WorkflowDefinitionError(`${where}: dependency cycle among nodes ${ordered.cycle.join(', ')}`);

  const variableNames = new Set<string>();
  const variables = (definition.variables ?? []).map((variable) => {
    if (variableNames.has(variable.name)) throw new WorkflowDefinitionError(`${where}: duplicate variable "${variable.name}"`);
    variableNames.add(variable.name);
    return {
      name: variable.name,
      variableType: variable.variableType ?? 'string',
      required: variable.required ?? false,
      options: variable.options ?? [],
    };
  });

  return { canvasId: definition.canvasId ?? newCanvasId(), title: definition.title ?? '', nodes: ordered.order, variables };
}

function normalizeNode(node: NodeInput, where: string): WorkflowNode {
  const type = node.type ?? 'task';
  const title = node.title ?? node.id;
  const base = {
    id: node.id,
    type,
    title,
    prompt: node.prompt ?? title,
    toolsets: node.toolsets ?? [],
    parents: [...new Set(node.parents ?? [])],
  };
  if (type !== 'task') {
    if (node.messages !== undefined || node.files !== undefined || node.failure !== undefined || node.durationMs !== undefined || node.durationCv !== undefined) {
      throw new WorkflowDefinitionError(`${where}: node "${node.id}" of type ${type} does no work; give it no duration, messages, files or failure`);
    }
    return { ...base, durationMs: 0, durationCv: 0, messages: [], files: [], failure: undefined };
  }
  const durationMs = node.durationMs ?? DEFAULT_TASK_DURATION_MS;
  const messages = normalizeMessages(node, durationMs, where);
  return { ...base, durationMs, durationCv: node.durationCv ?? 0, messages, files: (node.files ?? []).map(normalizeFile), failure: normalizeFailure(node, durationMs, where) };
}

function normalizeMessages(node: NodeInput, durationMs: number, where: string): ScriptedMessage[] {
  const messages = node.messages ?? [];
  let previous = 0;
  return messages.map((message, index) => {
    // Evenly spread by default, so a message appears part-way through the node's work.
    const atMs = message.atMs ?? Math.round((durationMs * (index + 1)) / messages.length);
    if (atMs > durationMs) throw new WorkflowDefinitionError(`${where}: message ${index} of node "${node.id}" is timed after the node ends`);
    if (atMs < previous) throw new WorkflowDefinitionError(`${where}: messages of node "${node.id}" must be in time order`);
    previous = atMs;
    return { content: message.content, reasoning: message.reasoning === undefined ? '' : message.reasoning, type: message.type ?? 'ai', atMs };
  });
}

function normalizeFile(file: NonNullable<NodeInput['files']>[number]): ScriptedFile {
  if (file.content !== undefined) return { name: file.name, type: file.type, bytes: new TextEncoder().encode(file.content) };
  // Filler bytes, so that a file given only by size can still be downloaded; a PNG as a real picture, so that it previews.
  const size = file.size ?? 0;
  const bytes = file.type === 'image/png' ? fillerPng(size) : new Uint8Array(size).fill(0x2e);
  return { name: file.name, type: file.type, bytes };
}

function normalizeFailure(node: NodeInput, durationMs: number, where: string): ScriptedFailure | undefined {
  const failure = node.failure;
  if (failure === undefined) return undefined;
  switch (failure.kind) {
    case 'credit':
      return { kind: 'credit' };
    case 'error': {
      const atMs = failure.atMs ?? durationMs;
      if (atMs > durationMs) throw new WorkflowDefinitionError(`${where}: node "${node.id}" fails after it would have finished`);
      return { kind: 'error', errors: failure.errors ?? [DEFAULT_FAILURE_ERROR], atMs };
    }
    default:
      return assertNever(failure);
  }
}
