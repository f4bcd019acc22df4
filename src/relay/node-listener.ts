import type { RunRelay } from './run-relay.js';

/**
 * What the listener reads of a `node:http` request (an `IncomingMessage`), written out so this file
 * imports nothing from Node and the relay's folder stays free of it.
 */
export interface NodeRequest extends AsyncIterable<Uint8Array> {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** A TLS socket (`node:https`) has `encrypted: true`. */
  readonly socket?: object | null;
}

/** What the listener uses of a `node:http` `ServerResponse`. */
export interface NodeResponse {
  writeHead(status: number, headers: Record<string, string | string[]>): unknown;
  flushHeaders(): void;
  write(chunk: Uint8Array): boolean;
  end(): unknown;
  destroy(): unknown;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  off(event: 'close' | 'drain', listener: () => void): unknown;
  readonly writableEnded: boolean;
}

/**
 * A `node:http` (or `node:https`, `http2` compat) request listener serving `relay`: each request
 * becomes a `Request`, the `Response` is written back as it streams, and a viewer that disconnects
 * cancels its stream (the relay goes on following the execution for the others).
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * createServer(toNodeListener(relay)).listen(8080);
 * ```
 */
export function toNodeListener(relay: Pick<RunRelay, 'fetch'>): (request: NodeRequest, response: NodeResponse) => void {
  return (request, response) => {
    const gone = new AbortController();
    const onClose = (): void => {
      gone.abort();
    };
    response.once('close', onClose);
    const asked = requestOf(request, gone.signal);
    void (asked === undefined ? Promise.resolve(notAUrl()) : relay.fetch(asked))
      .then((answer) => write(answer, response, gone.signal))
      .catch(() => {
        if (!response.writableEnded) response.destroy();
      })
      .finally(() => {
        response.off('close', onClose);
      });
  };
}

/**
 * The `Request` of a Node request, or `undefined` when its Host header or target makes no URL (Node
 * lets `Host: [::1` through): that TypeError must not escape the listener, where it would take the
 * whole process down.
 */
function requestOf(request: NodeRequest, signal: AbortSignal): Request | undefined {
  try {
    return toRequest(request, signal);
  } catch {
    return undefined;
  }
}

/** The answer to a request that makes no URL. */
function notAUrl(): Response {
  const body = JSON.stringify({ error: 'BAD_REQUEST', message: "The request's Host header or target does not make a URL" });
  return new Response(body, { status: 400, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } });
}

function toRequest(request: NodeRequest, signal: AbortSignal): Request {
  const method = request.method ?? 'GET';
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (value !== undefined) for (const one of value) headers.append(name, one);
  }
  const host = headers.get('host') ?? 'localhost';
  const socket = request.socket;
  const scheme = typeof socket === 'object' && socket !== null && 'encrypted' in socket && socket.encrypted === true ? 'https' : 'http';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // `duplex` is what fetch's Request needs for a streamed body; the DOM types do not list it yet.
  const init = { method, headers, signal, ...(hasBody ? { body: bodyOf(request), duplex: 'half' } : {}) } as RequestInit;
  return new Request(new URL(request.url ?? '/', `${scheme}://${host}`), init);
}

function bodyOf(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** Writes `answer` to `response` as its body streams, waiting for the socket when it is full; stops when the peer left. */
async function write(answer: Response, response: NodeResponse, gone: AbortSignal): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = answer.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  response.writeHead(answer.status, headers);
  const body = answer.body;
  if (body === null) {
    response.end();
    return;
  }
  response.flushHeaders();
  const reader = body.getReader();
  const cancel = (): void => {
    reader.cancel().catch(() => undefined);
  };
  if (gone.aborted) cancel();
  else gone.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!response.write(value)) await drained(response, gone);
    }
    response.end();
  } finally {
    gone.removeEventListener('abort', cancel);
  }
}

/** Resolves when the socket takes more, or the peer is gone (at once if it already is: its 'close' came before). */
function drained(response: NodeResponse, gone: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (gone.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      response.off('drain', done);
      gone.removeEventListener('abort', done);
      resolve();
    };
    response.once('drain', done);
    gone.addEventListener('abort', done, { once: true });
  });
}
