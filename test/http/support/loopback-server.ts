import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** One request the test server received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export type Handler = (request: ReceivedRequest, response: ServerResponse, index: number) => void | Promise<void>;

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly requests: ReceivedRequest[];
}

const open: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => { resolve(Buffer.concat(chunks)); });
    request.on('error', reject);
  });
}

/** A real HTTP server on 127.0.0.1, port 0, closed after the test (as ky's create-http-test-server). */
export async function startServer(handler: Handler): Promise<LoopbackServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then(async (body) => {
      const received = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      requests.push(received);
      await handler(received, response, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => { resolve(); });
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, requests };
}

/** Answers JSON. */
export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** Answers the success envelope (service.md §1.1). */
export function ok(response: ServerResponse, data: unknown, headers: Record<string, string> = {}): void {
  json(response, 200, { success: true, data }, headers);
}

/** A syntactically valid key (service.md §1.5) that tests search for in every output. */
export const API_KEY = 'rf_SECRETsecretSECRETsecret0123456789';
