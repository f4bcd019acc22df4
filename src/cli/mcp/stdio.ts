import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CliContext } from '../context.js';

/**
 * Serves `server` on the process's stdin and stdout until the MCP client closes stdin, Ctrl-C or
 * SIGTERM. stdout carries the protocol and nothing else. Closing the server aborts the tool calls in
 * flight, so the runs they follow abort their executions once.
 */
export async function serveStdio(server: McpServer, context: CliContext, stdin: NodeJS.ReadStream): Promise<void> {
  // Loaded here: only `flowstream mcp` loads the SDK (the command's bundle inlines this module).
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport(stdin, context.stdout);
  transport.onerror = (error) => {
    context.stderr.write(`flowstream mcp: ${error.message}\n`);
  };
  let stop = (): void => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  // The SDK's transport does not watch for the end of stdin: the client going away ends the server here.
  stdin.once('end', stop).once('close', stop);
  const stopInterrupt = context.interrupts(stop);
  process.once('SIGTERM', stop);
  transport.onclose = stop;
  try {
    await server.connect(transport);
    await stopped;
  } finally {
    stdin.off('end', stop).off('close', stop);
    stopInterrupt();
    process.off('SIGTERM', stop);
    await server.close();
  }
}
