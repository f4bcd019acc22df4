import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
};

/** A served folder: `url` is its root on 127.0.0.1, without a trailing slash. */
export interface StaticSite {
  readonly url: string;
  close(): Promise<void>;
}

/** The site's own routes beside its files: answers and returns true for a request it takes, false for the files. */
export type SiteRoutes = (request: IncomingMessage, response: ServerResponse) => boolean;

/**
 * Serves the files of `root` (GET only) on an ephemeral loopback port, for `npm run web` and the browser
 * tests; `routes` (the dashboard's app routes) see each request first.
 */
export async function serveFolder(root: string, routes: SiteRoutes = () => false): Promise<StaticSite> {
  const server = createServer((request, response) => {
    if (routes(request, response)) return;
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname));
    const type = CONTENT_TYPES[extname(path)];
    // An absolute path normalised cannot climb above `/`, so the joined path stays inside root.
    if (request.method !== 'GET' || type === undefined) {
      response.writeHead(404).end();
      return;
    }
    readFile(join(root, path)).then(
      (body) => response.writeHead(200, { 'content-type': type }).end(body),
      () => response.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => { resolve(); });
    }),
  };
}
