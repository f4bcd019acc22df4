import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { ConnectionDropped } from '../app/connection-dropped.js';
import type { FetchHandler } from '../app/create-app.js';

/** The emulator's HTTP server, always on loopback. */
export interface LoopbackServer {
  readonly port: number;
  /** Starts answering with `handler`; until then no request is read (the URL must be known first). */
  serve(handler: FetchHandler): void;
  close(): Promise<void>;
}

/** The host the emulator serves on: loopback only, never reachable from other machines. */
export const LOOPBACK_HOST = '127.0.0.1';

/** Listens on 127.0.0.1:`port` (0 = ephemeral). */
export async function listenOnLoopback(port: number): Promise<LoopbackServer> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    serve: (handler) => {
      server.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
        void serve(handler, incoming, outgoing);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        // Keep-alive and in-flight connections would hold close() open: end them all.
        server.closeAllConnections();
      }),
  };
}

async function serve(handler: FetchHandler, incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  try {
    const response = await handler(toRequest(incoming));
    outgoing.writeHead(response.status, [...response.headers].flat());
    if (response.body === null) {
      outgoing.end();
      return;
    }
    // The DOM and Node typings describe the same WHATWG stream differently.
    await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), outgoing);
  } catch (error) {
    if (!(error instanceof ConnectionDropped) && !outgoing.headersSent) {
      outgoing.writeHead(500, { 'Content-Type': 'text/plain' }).end('emulator failure');
      return;
    }
    incoming.socket.destroy();
  }
}

/** IncomingMessage → Request, streaming the body rather than buffering it. */
function toRequest(incoming: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headersDistinct)) {
    for (const item of value ?? []) headers.append(name, item);
  }
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (hasBody) {
    // The DOM and Node typings describe the same WHATWG stream differently.
    init.body = Readable.toWeb(incoming) as unknown as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  return new Request(new URL(incoming.url ?? '/', `http://${incoming.headers.host ?? LOOPBACK_HOST}`), init);
}
