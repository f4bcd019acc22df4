import * as z from 'zod/mini';
import type { WorkflowToolConfig } from '../../mcp/workflow-tools.js';
import { UsageError } from '../usage-error.js';

// Every message written out: zod/mini carries no locale of its own.
const CANVAS_ID = z.string({ error: 'expected a canvas id (c-…)' }).check(z.trim(), z.minLength(1, 'a canvas id cannot be empty'), z.regex(/^[^\s:]+$/u, 'a canvas id has no spaces or colons'));

function unknownKeys(what: string, known: string): (issue: z.core.$ZodRawIssue) => string {
  return (issue) => (issue.code === 'unrecognized_keys' ? `unknown ${issue.keys.map((key) => `"${key}"`).join(', ')}: ${what} has ${known}` : `expected ${what}`);
}

const ENTRY = z.strictObject(
  {
    canvasId: CANVAS_ID,
    tool: z.optional(z.string({ error: 'expected the tool\'s name' }).check(z.trim(), z.minLength(1, 'a tool name cannot be empty'))),
    description: z.optional(z.string({ error: 'expected the tool\'s description' })),
  },
  { error: unknownKeys('a canvas id or an object', 'canvasId, tool and description') },
);

const FILE = z.strictObject({ workflows: z.array(z.unknown(), { error: 'expected a list of workflows' }) }, { error: unknownKeys('an object', '"workflows" alone') });

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
  const refuse = (issues: readonly z.core.$ZodIssue[], at: readonly PropertyKey[] = []): never => {
    const lines = issues.map((issue) => `  ${describeIssue({ ...issue, path: [...at, ...issue.path] })}`);
    throw new UsageError(`${source} is not a flowstream mcp configuration ({ "workflows": ["c-…", { "canvasId": "c-…", "tool": "name", "description": "…" }] }):\n${lines.join('\n')}`);
  };
  const file = FILE.safeParse(json);
  if (!file.success) return refuse(file.error.issues);
  // An entry is a canvas id or an object, each checked by its own schema: the error says what is wrong with it.
  return file.data.workflows.map((entry, index) => {
    if (typeof entry === 'string') {
      const canvasId = CANVAS_ID.safeParse(entry);
      return canvasId.success ? { canvasId: canvasId.data } : refuse(canvasId.error.issues, ['workflows', index]);
    }
    const checked = ENTRY.safeParse(entry);
    if (!checked.success) return refuse(checked.error.issues, ['workflows', index]);
    const { canvasId, tool, description } = checked.data;
    return { canvasId, ...(tool === undefined ? {} : { tool }), ...(description === undefined ? {} : { description }) };
  });
}
