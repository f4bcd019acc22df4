import * as z from 'zod/mini';
import type { WorkflowToolConfig } from '../../mcp/workflow-tools.js';
import { UsageError } from '../usage-error.js';

const CANVAS_ID = z.string().check(z.trim(), z.minLength(1, 'a canvas id cannot be empty'), z.regex(/^[^\s:]+$/u, 'a canvas id has no spaces or colons'));

const ENTRY = z.union([
  CANVAS_ID,
  z.strictObject({
    canvasId: CANVAS_ID,
    tool: z.optional(z.string().check(z.trim(), z.minLength(1, 'a tool name cannot be empty'))),
    description: z.optional(z.string()),
  }),
]);

const FILE = z.strictObject({ workflows: z.array(ENTRY) });

/**
 * One `--workflow` value: `c-…` or `c-…:tool_name`.
 *
 * @example
 * ```ts
 * parseWorkflowFlag('c-sample-variables:newsletter'); // { canvasId: 'c-sample-variables', tool: 'newsletter' }
 * ```
 */
export function parseWorkflowFlag(value: string): WorkflowToolConfig {
  const colon = value.indexOf(':');
  const canvasId = (colon === -1 ? value : value.slice(0, colon)).trim();
  const tool = colon === -1 ? undefined : value.slice(colon + 1).trim();
  if (canvasId === '' || /\s/u.test(canvasId)) throw new UsageError(`--workflow "${value}": expected a canvas id, optionally followed by :tool_name (c-…:summarise).`);
  if (tool === '') throw new UsageError(`--workflow "${value}": the tool name after ":" is empty.`);
  return tool === undefined ? { canvasId } : { canvasId, tool };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
  return `${path}${issue.message}`;
}

/**
 * The workflows of a configuration file's parsed JSON (`flowstream.mcp.json`): `{ "workflows": [ … ] }`,
 * each entry a canvas id or `{ canvasId, tool?, description? }`. `source` names the file in errors.
 *
 * @example
 * ```ts
 * parseWorkflowToolFile({ workflows: ['c-sample-linear', { canvasId: 'c-sample-variables', tool: 'newsletter' }] }, 'flowstream.mcp.json');
 * ```
 */
export function parseWorkflowToolFile(json: unknown, source: string): WorkflowToolConfig[] {
  const parsed = FILE.safeParse(json);
  if (!parsed.success) {
    throw new UsageError(`${source} is not a flowstream mcp configuration ({ "workflows": ["c-…", { "canvasId": "c-…", "tool": "name", "description": "…" }] }):\n${parsed.error.issues.map((issue) => `  ${describeIssue(issue)}`).join('\n')}`);
  }
  return parsed.data.workflows.map((entry) => {
    if (typeof entry === 'string') return { canvasId: entry };
    const { canvasId, tool, description } = entry;
    return { canvasId, ...(tool === undefined ? {} : { tool }), ...(description === undefined ? {} : { description }) };
  });
}
