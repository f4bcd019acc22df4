import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CliContext } from '../context.js';

/**
 * Serves `server` on the process's stdin and stdout until the MCP client closes stdin, Ctrl-C,
 * SIGTERM or SIGHUP. stdout carries the protocol and nothing else. Closing the server aborts the tool calls in
 * flight, so the runs they follow abort their executions once.
 */
export async function serveStdio(server: McpServer, context: CliContext, stdin: NodeJS.ReadStream): Promise<void> {
  // Loaded here: only `flowstream mcp` loads the SDK (the command's bundle inlines this module).
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport(stdin, context.stdout);
  transport.onerror = (error) => {
    context.stderr.write(`flowstream mcp: ${error.message}\n`);
  };
  let stopListening = (): void => undefined;
  const stopped = new Promise<string>((resolve) => {
    // The SDK's transport does not watch for the end of stdin: the client going away ends the server here.
    const ended = (): void => {
      resolve('the client closed the connection');
    };
    stdin.once('end', ended).once('close', ended);
    transport.onclose = ended;
    const stopInterrupt = context.interrupts((signal) => {
      resolve(signal === 'SIGINT' ? 'interrupted' : signal);
    });
    stopListening = () => {
      stdin.off('end', ended).off('close', ended);
      stopInterrupt();
    };
  });
  try {
    await server.connect(transport);
    // Closing the server aborts the tool calls in flight: their executions are aborted before the process ends.
    context.stderr.write(`flowstream mcp: stopping (${await stopped})\n`);
  } finally {
    stopListening();
    await server.close();
  }
}
