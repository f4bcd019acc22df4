/**
 * A Node HTTP service that starts runs and streams their events to the client as server-sent events.
 * When the client disconnects before the end, the subscription is dropped, and that aborts the
 * execution (exactly once: the run's `abortOnUnsubscribe`).
 *
 *   npx tsx examples/sse-service.ts                 (PORT=8080 to choose the port)
 *   curl -N 'http://127.0.0.1:<port>/runs/c-sample-parallel?topic=tides'
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Client } from '../src/index.js';
import { connectForExample } from './example-connection.js';

/** `GET /runs/<canvasId>?name=value…`: query parameters become the run's variables. */
function streamRun(client: Client, canvasId: string, request: IncomingMessage, response: ServerResponse): void {
  const variables = Object.fromEntries(new URL(request.url ?? '/', 'http://localhost').searchParams);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let id = 0;
  const send = (event: string, data: unknown): void => {
    id += 1;
    response.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const subscription = client.run(canvasId, { variables }, { failOnWorkflowError: false }).subscribe({
    next: (event) => {
      send(event.type, event);
    },
    error: (error: unknown) => {
      send('error', { message: error instanceof Error ? error.message : String(error) });
      response.end();
    },
    complete: () => response.end(),
  });
  // 'close' comes when the client goes away — and after `end()`, when unsubscribing is a no-op.
  response.on('close', () => {
    subscription.unsubscribe();
  });
}

const { client, close } = await connectForExample();
const server = createServer((request, response) => {
  const match = /^\/runs\/([\w-]+)(?:\?|$)/u.exec(request.url ?? '');
  if (request.method !== 'GET' || match?.[1] === undefined) {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('GET /runs/<canvasId>\n');
    return;
  }
  streamRun(client, match[1], request, response);
});

server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  console.log(`SSE service listening on http://127.0.0.1:${port}`);
  console.log(`Try: curl -N http://127.0.0.1:${port}/runs/c-sample-parallel`);
});

process.once('SIGINT', () => {
  server.close();
  server.closeAllConnections();
  void close().then(() => {
    console.log('stopped');
  });
});
