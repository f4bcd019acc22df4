import { describe, expect, it } from 'vitest';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import { clientFor } from '../http/support/client.js';
import { ok, startServer } from '../http/support/loopback-server.js';

/** The same full page, whatever `page` asks for: a server that ignores it. */
function page(offset: number, size: number): { canvasId: string; title: string }[] {
  return Array.from({ length: size }, (_, index) => ({ canvasId: `c-${offset + index}`, title: `Workflow ${offset + index}` }));
}

describe('workflows.list() against a server that ignores page', () => {
  it('stops when a page repeats the one before, yielding each workflow once', async () => {
    const server = await startServer((_request, response) => {
      ok(response, page(0, 5));
    });
    const seen: string[] = [];
    for await (const workflow of clientFor(server.origin).workflows.list({ pageSize: 5 })) seen.push(workflow.canvasId);
    expect(seen).toEqual(['c-0', 'c-1', 'c-2', 'c-3', 'c-4']);
    expect(server.requests).toHaveLength(2);
  });

  it('stops after maxPages of a server that never ends', async () => {
    const server = await startServer((request, response) => {
      const number = Number(new URL(request.url, 'http://x').searchParams.get('page'));
      ok(response, page(number * 100, 2));
    });
    const seen: string[] = [];
    for await (const workflow of clientFor(server.origin).workflows.list({ pageSize: 2, maxPages: 3 })) seen.push(workflow.canvasId);
    expect(seen).toHaveLength(6);
    expect(server.requests).toHaveLength(3);
  });

  it('refuses a maxPages that is not a whole number ≥ 1', async () => {
    const client = clientFor('http://127.0.0.1:9');
    const iterator = client.workflows.list({ maxPages: 0 })[Symbol.asyncIterator]();
    const error: unknown = await iterator.next().catch((e: unknown) => e);
    expect(isInvalidArgumentError(error)).toBe(true);
  });
});
