import { Command } from 'commander';
import type { WorkflowToolConfig } from '../../mcp/workflow-tools.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import type { McpFlags } from '../mcp/serve-mcp.js';
import { parseWorkflowFlag } from '../mcp/workflow-tool-config.js';
import { portNumber } from '../numbers.js';
import { outcomeAbout } from '../outcome.js';

/** The default port of `--http`. */
const DEFAULT_PORT = 3737;

const EXAMPLES = `
Examples:
  $ flowstream mcp --workflow c-sample-variables:newsletter
  $ flowstream mcp --config flowstream.mcp.json
  $ FLOWSTREAM_MCP_TOKEN=… flowstream mcp --http --port 3737

In an MCP client's configuration (stdio):
  { "command": "npx", "args": ["flowstream", "mcp", "--workflow", "c-…"],
    "env": { "FLOWSTREAM_API_KEY": "rf_…", "FLOWSTREAM_BASE_URL": "https://…/v1" } }

The API key and base URL come from FLOWSTREAM_API_KEY and FLOWSTREAM_BASE_URL only. Over stdio, stdout
carries the protocol and nothing else; messages go to stderr. Over HTTP, the server listens on
127.0.0.1 only and each request needs Authorization: Bearer <FLOWSTREAM_MCP_TOKEN> (without that
variable a token is made and printed to stderr).`;

function collectWorkflow(value: string, previous: readonly WorkflowToolConfig[]): WorkflowToolConfig[] {
  return [...previous, parseWorkflowFlag(value)];
}

/** `flowstream mcp`: hosted workflows as tools of a Model Context Protocol server, for agents. */
export function mcpCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return new Command('mcp')
    .description('serve workflows as tools to AI agents (Model Context Protocol), over stdio or HTTP')
    .option('--workflow <canvasId[:tool_name]>', 'serve a workflow as a tool of its own, its input the plan\'s variables; repeatable', collectWorkflow, [])
    .option('--config <file>', 'a JSON file listing the workflows to serve: { "workflows": ["c-…", { "canvasId": "c-…", "tool": "name", "description": "…" }] }')
    .option('--http', 'serve Streamable HTTP on 127.0.0.1 instead of stdio', false)
    .option('--port <port>', 'the port of --http (0: any free port)', portNumber, DEFAULT_PORT)
    .addHelpText('after', EXAMPLES)
    .action(async (flags: McpFlags) => {
      report(
        await outcomeAbout({ ...(context.env['FLOWSTREAM_BASE_URL'] === undefined ? {} : { baseUrl: context.env['FLOWSTREAM_BASE_URL'].trim() }) }, async () => {
          // Loaded here: the MCP SDK is for this command alone.
          const { serveMcp } = await import('../mcp/serve-mcp.js');
          await serveMcp(flags, context);
          return { kind: 'done' };
        }),
      );
    });
}
