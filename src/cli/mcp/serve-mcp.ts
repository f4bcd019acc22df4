import { readFile } from 'node:fs/promises';
import type { WorkflowPlan } from '../../domain/model.js';
import { isNotFoundError } from '../../errors/index.js';
import { createFlowstreamMcpServer } from '../../mcp/mcp-server.js';
import { GENERAL_TOOL_NAMES } from '../../mcp/tool-names.js';
import { type WorkflowToolConfig, workflowTools } from '../../mcp/workflow-tools.js';
import { connect } from '../connect.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../usage-error.js';
import { packageVersion } from '../version.js';
import { serveHttp } from './http.js';
import { serveStdio } from './stdio.js';
import { parseWorkflowToolFile } from './workflow-tool-config.js';

/** The `flowstream mcp` flags, parsed. */
export interface McpFlags {
  readonly workflow: readonly WorkflowToolConfig[];
  readonly config?: string;
  readonly http: boolean;
  readonly port: number;
}

async function configuredWorkflows(flags: McpFlags): Promise<WorkflowToolConfig[]> {
  if (flags.config === undefined) return [...flags.workflow];
  let text: string;
  try {
    text = await readFile(flags.config, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read the configuration file ${flags.config}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The configuration file ${flags.config} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return [...parseWorkflowToolFile(json, flags.config), ...flags.workflow];
}

/**
 * `flowstream mcp`: reads the plans of the configured workflows, then serves the tools over stdio
 * (the default) or Streamable HTTP until the client leaves, Ctrl-C, SIGTERM or SIGHUP. The API key and base
 * URL come from the environment only: an MCP client's configuration shows its command line.
 */
export async function serveMcp(flags: McpFlags, context: CliContext): Promise<void> {
  // Said here, not by the other commands' check, which offers --api-key and --base-url.
  const unset = ['FLOWSTREAM_API_KEY', 'FLOWSTREAM_BASE_URL'].filter((name) => (context.env[name] ?? '').trim() === '');
  if (unset.length > 0) {
    throw new UsageError(`Set ${unset.join(' and ')} in the environment of \`flowstream mcp\` (the \`env\` of the server in your MCP client's configuration): the API key and address are never taken from the command line, which clients show.`);
  }
  const configs = await configuredWorkflows(flags);
  const client = connect({}, context);
  const plans = new Map<string, WorkflowPlan>();
  for (const { canvasId } of configs) {
    if (plans.has(canvasId)) continue;
    try {
      plans.set(canvasId, await client.workflows.get(canvasId));
    } catch (error) {
      // A workflow that is not there is a mistake in the configuration; any other failure is the service's.
      if (isNotFoundError(error) && error.errCode !== undefined) throw new UsageError(`No workflow ${canvasId} in this account, so it cannot be served as a tool: check --workflow and --config (\`flowstream search\` lists the workflows).`);
      throw error;
    }
  }
  const workflows = workflowTools(configs, plans);
  const log = (line: string): void => {
    context.stderr.write(`flowstream mcp: ${line}\n`);
  };
  const newServer = () => createFlowstreamMcpServer({ client, workflows, version: packageVersion(), log });
  const tools = [...GENERAL_TOOL_NAMES, ...workflows.map((tool) => `${tool.name} (${tool.canvasId})`)];
  log(`tools: ${tools.join(', ')}`);
  if (flags.http) {
    const token = context.env['FLOWSTREAM_MCP_TOKEN']?.trim() ?? '';
    await serveHttp({ newServer, port: flags.port, token: token === '' ? undefined : token }, context);
    return;
  }
  if (context.stdin === undefined) throw new UsageError('flowstream mcp over stdio needs a standard input.');
  await serveStdio(await newServer(), context, context.stdin);
}
