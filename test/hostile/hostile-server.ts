import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { startServer, type Handler, type LoopbackServer } from '../http/support/loopback-server.js';

/**
 * A hostile or broken HTTP server for one test: a real server on 127.0.0.1, port 0, closed after the
 * test, that answers every request with the test's own handler. The helpers below write what a
 * well-behaved server never would.
 */
export interface HostileServer extends LoopbackServer {
  /** The base URL a client is given: `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
}

export type { Handler, ReceivedRequest } from '../http/support/loopback-server.js';

/** Starts a hostile server whose every answer is `handler`'s (the request's body is read first). */
export async function startHostileServer(handler: Handler): Promise<HostileServer> {
  const server = await startServer(handler);
  return { ...server, baseUrl: `${server.origin}/v1` };
}

/**
 * Writes `raw` straight onto the connection and closes it, past Node's HTTP framing: a status line,
 * headers or chunking that no HTTP library would produce.
 */
export function writeRaw(response: ServerResponse, raw: string): void {
  response.socket?.end(raw);
}

const MiB = 1024 * 1024;
const bombs = new Map<number, Buffer>();

/**
 * A gzip body that inflates to `inflatedMiB` MiB of `fill` (one gzip member per MiB, which decoders
 * read one after another): 256 MiB weighs about 263 KB on the wire. Built once per size.
 */
export function gzipBomb(inflatedMiB: number): Buffer {
  let bomb = bombs.get(inflatedMiB);
  if (bomb === undefined) {
    const member = gzipSync(Buffer.alloc(MiB, ' '), { level: 9 });
    bomb = Buffer.concat(Array.from({ length: inflatedMiB }, () => member));
    bombs.set(inflatedMiB, bomb);
  }
  return bomb;
}

/** How much of a streamed body left the server before it ended or the client hung up. */
export interface StreamedBody {
  readonly written: number;
  readonly complete: boolean;
}

/**
 * Streams `totalBytes` of filler in 64 KiB chunks as fast as the client reads them (waiting for
 * `drain`, so a client that stops reading stops the server too). Resolves once the body is complete
 * or the connection closed, with the bytes written. Send the head first (`writeHead`).
 */
export function streamFiller(response: ServerResponse, totalBytes: number): Promise<StreamedBody> {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  return new Promise((resolve) => {
    let written = 0;
    let closed = false;
    response.on('close', () => {
      closed = true;
      resolve({ written, complete: response.writableFinished });
    });
    const pump = (): void => {
      while (!closed && written < totalBytes) {
        const piece = chunk.subarray(0, Math.min(chunk.byteLength, totalBytes - written));
        written += piece.byteLength;
        if (!response.write(piece)) {
          response.once('drain', pump);
          return;
        }
      }
      if (!closed) response.end();
    };
    pump();
  });
}
