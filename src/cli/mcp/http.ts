import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CliContext } from '../context.js';

/** Where the server answers: the Streamable HTTP endpoint, on loopback only. */
export const MCP_PATH = '/mcp';
const HOST = '127.0.0.1';

/** The largest request body read: a JSON-RPC message, never a file. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What `serveHttp` needs: a new MCP server per session, the port, and the bearer token, if the user set one. */
export interface HttpServeOptions {
  readonly newServer: () => Promise<McpServer>;
  readonly port: number;
  /** From `FLOWSTREAM_MCP_TOKEN`; without it, one is made and printed to stderr once. */
  readonly token: string | undefined;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
}

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
function authorised(request: IncomingMessage, token: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/iu.exec(request.headers.authorization ?? '');
  if (match?.[1] === undefined) return false;
  const given = Buffer.from(match[1]);
  return given.length === token.length && timingSafeEqual(given, token);
}

function answer(response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** The request's JSON body; `undefined` for an empty one. Throws for a body too large or not JSON. */
async function jsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new RangeError(`The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? undefined : (JSON.parse(text) as unknown);
}

/**
 * Serves MCP over Streamable HTTP on `http://127.0.0.1:<port>/mcp` until Ctrl-C, SIGTERM or SIGHUP: each
 * request needs `Authorization: Bearer <token>` (401 without) and a loopback `Host` (403 otherwise,
 * against DNS rebinding); each MCP session has its own server, all on one client and its budget.
 * Stopping closes every session, which aborts the tool calls in flight.
 */
export async function serveHttp(options: HttpServeOptions, context: CliContext): Promise<void> {
  // Loaded here: only `flowstream mcp` loads the SDK (the command's bundle inlines this module).
  const { StreamableHTTPServerTransport: Transport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js');
  const token = options.token ?? randomBytes(32).toString('base64url');
  const tokenBytes = Buffer.from(token);
  const sessions = new Map<string, Session>();
  let allowedHosts: readonly string[] = [];

  const openSession = async (request: IncomingMessage, response: ServerResponse, body: unknown): Promise<void> => {
    const server = await options.newServer();
    const transport: StreamableHTTPServerTransport = new Transport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    transport.onerror = (error) => {
      context.stderr.write(`flowstream mcp: ${error.message}\n`);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (!allowedHosts.includes(request.headers.host ?? '')) {
      answer(response, 403, 'This server answers on 127.0.0.1 only.');
      return;
    }
    if (!authorised(request, tokenBytes)) {
      answer(response, 401, 'Missing or wrong token: send Authorization: Bearer <token> (FLOWSTREAM_MCP_TOKEN).', { 'WWW-Authenticate': 'Bearer' });
      return;
    }
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== MCP_PATH) {
      answer(response, 404, `The MCP endpoint is ${MCP_PATH}.`);
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    const body = request.method === 'POST' ? await jsonBody(request) : undefined;
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (session === undefined) {
        answer(response, 404, 'No such session: initialize a new one.');
        return;
      }
      await session.transport.handleRequest(request, response, body);
      return;
    }
    if (request.method === 'POST' && isInitializeRequest(body)) {
      await openSession(request, response, body);
      return;
    }
    answer(response, 400, 'No session: the first request initializes one, later ones send its Mcp-Session-Id.');
  };

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const message = error instanceof SyntaxError ? 'The body is not JSON.' : error instanceof Error ? error.message : String(error);
      if (response.headersSent) response.end();
      else answer(response, error instanceof SyntaxError || error instanceof RangeError ? 400 : 500, message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject).listen(options.port, HOST, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  allowedHosts = [`${HOST}:${port}`, `localhost:${port}`];
  // Listening for the stop signals before saying it listens: whoever reads that may stop it at once.
  let stopListening = (): void => undefined;
  const stopped = new Promise<string>((resolve) => {
    stopListening = context.interrupts((signal) => {
      resolve(signal === 'SIGINT' ? 'interrupted' : signal);
    });
  });
  context.stderr.write(`flowstream mcp: listening on http://${HOST}:${port}${MCP_PATH} (Streamable HTTP)\n`);
  if (options.token === undefined) context.stderr.write(`flowstream mcp: no FLOWSTREAM_MCP_TOKEN set; the token of this server, until it stops (send Authorization: Bearer <token>): ${token}\n`);
  // Closing the sessions aborts the tool calls in flight: their executions are aborted before the process ends.
  context.stderr.write(`flowstream mcp: stopping (${await stopped})\n`);
  stopListening();
  const closing = new Promise<void>((resolve) => {
    http.close(() => {
      resolve();
    });
  });
  await Promise.all([...sessions.values()].map(({ server }) => server.close()));
  http.closeAllConnections();
  await closing;
}
