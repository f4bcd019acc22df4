import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { tap } from 'rxjs';
import * as z from 'zod/mini';
import type { Client } from '../client.js';
import type { Variables, WorkflowPlan } from '../domain/model.js';
import { planSchema } from '../domain/plan-schema.js';
import { type SearchQuery, WORKFLOW_ORDERS } from '../http/resources.js';
import { runResult } from '../runs/events.js';
import { checkVariablesAgainstPlan } from '../runs/run-lifecycle.js';
import { progressText } from './run-progress.js';
import { errorToolResult, runToolResult } from './tool-result.js';
import type { WorkflowTool } from './workflow-tools.js';

/** What one tool call is given by the SDK: the caller's cancellation, its progress token, a way to notify it. */
type ToolCall = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The server's parts: the client every call goes through (and its request budget), the workflows served as tools. */
export interface FlowstreamMcpServerOptions {
  readonly client: Client;
  readonly workflows: readonly WorkflowTool[];
  /** flowstream's version, told to the MCP client. */
  readonly version: string;
  /** Where the server says what a caller should not see (a progress notification that could not be sent). */
  readonly log: (line: string) => void;
}

const INSTRUCTIONS = `Hosted workflows, run through flowstream. Find a workflow with search_workflows, read what it
does and which variables it takes with get_workflow, then start it with run_workflow (or the workflow's
own tool, when it has one). A run takes from seconds to many minutes; progress notifications tell how it
goes when you send a progress token, and cancelling the call aborts the run.`;

const SEARCH_INPUT = z.strictObject({
  keyword: z.optional(z.string().check(z.describe('A part of the title, case aside'))),
  order: z.optional(z.enum(WORKFLOW_ORDERS).check(z.describe('Default: updationDesc (most recently changed first)'))),
  page: z.optional(z.int().check(z.minimum(1), z.describe('1-based; default 1'))),
  pageSize: z.optional(z.int().check(z.minimum(1), z.maximum(100), z.describe('Default 20'))),
});

const CANVAS_ID = z.string().check(z.trim(), z.minLength(1), z.describe('The workflow\'s canvas id (c-…)'));

const GET_INPUT = z.strictObject({ canvasId: CANVAS_ID });

const RUN_INPUT = z.strictObject({
  canvasId: CANVAS_ID,
  variables: z.optional(z.record(z.string(), z.unknown()).check(z.describe('The workflow\'s variables by name, as get_workflow describes them'))),
});

function json(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

/** A plan as get_workflow shows it: its steps, its variables, and the JSON Schema of run_workflow's `variables`. */
function describedPlan(canvasId: string, plan: WorkflowPlan): unknown {
  return {
    canvasId,
    title: plan.title,
    tasks: plan.tasks.map(({ id, title, prompt, dependentTasks }) => ({ id, title, prompt, dependentTasks })),
    variables: plan.variables,
    variablesSchema: z.toJSONSchema(planSchema(plan)),
  };
}

/**
 * Runs a workflow for a tool call and answers with its result: a progress notification per event
 * when the caller sent a progress token, and the caller's cancellation (`notifications/cancelled`, or
 * its connection closing) aborts the execution once — it ends the run as an unsubscribe does.
 */
function runWorkflow(client: Client, canvasId: string, variables: Variables, call: ToolCall, log: (line: string) => void): Promise<CallToolResult> {
  const token = call._meta?.progressToken;
  let sent = 0;
  const notify = (message: string): void => {
    if (token === undefined) return;
    sent += 1;
    // The notification is the caller's to lose: a closed connection also aborts the call (`signal`).
    call.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: sent, message } }).catch((error: unknown) => {
      log(`A progress notification was not sent: ${error instanceof Error ? error.message : String(error)}`);
    });
  };
  const run$ = client.run(canvasId, { variables }, { failOnWorkflowError: false, signal: call.signal }).pipe(
    tap((event) => {
      const text = progressText(event);
      if (text !== undefined) notify(text);
    }),
  );
  // A run that ends without its result (it always has one, or an error) rejects here too: nothing is left hanging.
  return runResult(run$).then(runToolResult, errorToolResult);
}

/**
 * An MCP server (the official TypeScript SDK's `McpServer`) whose tools are hosted workflows:
 * `search_workflows`, `get_workflow`, `run_workflow`, and one tool per configured workflow whose input
 * is its plan's variables. Every request goes through `client`, so through its request budget.
 * Connect it to a transport (stdio, Streamable HTTP) with `server.connect(transport)`.
 *
 * @example
 * ```ts
 * const server = await createFlowstreamMcpServer({ client, workflows: [], version: '1.0.0', log: console.error });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export async function createFlowstreamMcpServer(options: FlowstreamMcpServerOptions): Promise<McpServer> {
  // Loaded here, not imported above: the command bundles this module, and only `flowstream mcp` may load the SDK.
  const { McpServer: Server } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { client, log } = options;
  const server = new Server({ name: 'flowstream', version: options.version }, { instructions: INSTRUCTIONS });

  server.registerTool(
    'search_workflows',
    {
      title: 'Search workflows',
      description: 'Lists the account\'s workflows whose title contains a keyword: one page of { canvasId, title }. A page shorter than pageSize is the last.',
      inputSchema: SEARCH_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ keyword, order, page, pageSize }, call) => {
      try {
        const query: SearchQuery = {
          ...(keyword === undefined ? {} : { keyword }),
          ...(order === undefined ? {} : { order }),
          ...(page === undefined ? {} : { page }),
          ...(pageSize === undefined ? {} : { pageSize }),
        };
        const workflows = await client.workflows.search(query, { signal: call.signal });
        return json({ page: page ?? 1, workflows });
      } catch (error) {
        return errorToolResult(error);
      }
    },
  );

  server.registerTool(
    'get_workflow',
    {
      title: 'Get a workflow',
      description: 'Shows a workflow\'s plan: its title, its tasks, its variables, and the JSON Schema of the variables run_workflow takes for it.',
      inputSchema: GET_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ canvasId }, call) => {
      try {
        return json(describedPlan(canvasId, await client.workflows.get(canvasId, { signal: call.signal })));
      } catch (error) {
        return errorToolResult(error);
      }
    },
  );

  server.registerTool(
    'run_workflow',
    {
      title: 'Run a workflow',
      description: 'Starts a run of a workflow with its variables, follows it to its end and returns its output text and files (as links). The variables are checked against the workflow\'s plan first: a run costs credits.',
      inputSchema: RUN_INPUT,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ canvasId, variables: given = {} }, call) => {
      // Parsed from the call's JSON: every value is a VariableValue.
      const variables = given as Variables;
      try {
        // A wrong run still costs credits: the variables are checked against the plan before it starts.
        checkVariablesAgainstPlan(await client.workflows.get(canvasId, { signal: call.signal }), variables);
        return await runWorkflow(client, canvasId, variables, call, log);
      } catch (error) {
        return errorToolResult(error);
      }
    },
  );

  for (const workflow of options.workflows) {
    server.registerTool(
      workflow.name,
      {
        title: workflow.title,
        description: workflow.description,
        inputSchema: planSchema(workflow.plan),
        annotations: { title: workflow.title, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      // The SDK has checked the input against the plan's schema: every value is a VariableValue.
      (variables, call) => runWorkflow(client, workflow.canvasId, variables as Variables, call, log),
    );
  }
  return server;
}
