import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeError, displayedUrl } from '../../src/cli/describe-error.js';
import { NetworkError } from '../../src/index.js';

// What fetch itself throws, from real sockets on 127.0.0.1: a refused connection, and one the server
// drops after reading the request.

let dropping: Server;
let droppingUrl = '';
let closedUrl = '';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

async function fetchFailure(url: string): Promise<unknown> {
  return fetch(url, { method: 'POST', body: '{}' }).then(
    () => undefined,
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  dropping = createServer((request) => {
    request.socket.destroy();
  });
  droppingUrl = `http://127.0.0.1:${await listen(dropping)}/v1`;
  const closed = createServer();
  closedUrl = `http://127.0.0.1:${await listen(closed)}/v1`;
  await new Promise((resolve) => closed.close(resolve));
});

afterAll(() => {
  dropping.close();
});

describe('describeError for network failures', () => {
  it('says a refused start sent nothing, with the cause code and the URL', async () => {
    const error = new NetworkError({ endpoint: 'run', cause: await fetchFailure(closedUrl) });
    expect(describeError(error, { baseUrl: closedUrl })).toEqual([
      `Error: Could not connect to ${closedUrl} (ECONNREFUSED) for run: nothing was sent, so no execution was started.`,
      'Check FLOWSTREAM_BASE_URL (or --base-url) and your connection.',
    ]);
  });

  it('keeps "may have started" for a start whose connection broke after it was sent', async () => {
    const error = new NetworkError({ endpoint: 'run', cause: await fetchFailure(droppingUrl) });
    const [headline] = describeError(error, { baseUrl: droppingUrl });
    expect(headline).toMatch(new RegExp(`^Error: The connection to ${droppingUrl.replaceAll('.', '\\.')} failed during run \\(UND_ERR_SOCKET\\): the execution may have started`, 'u'));
  });

  it('names the execution to watch or abort when a poll failed', async () => {
    const error = new NetworkError({ endpoint: 'status', executionId: 'we-1', cause: await fetchFailure(closedUrl) });
    expect(describeError(error, { baseUrl: closedUrl })).toContain('Execution we-1 may still be running: flowstream watch we-1 follows it, flowstream abort we-1 stops it');
  });
});

describe('displayedUrl', () => {
  it.each([
    ['https://user:rf_secretsecretsecretsecretsecret12@api.example.test/v1', 'https://api.example.test/v1'],
    ['https://api.example.test/v1?key=rf_secretsecretsecretsecretsecret12#frag', 'https://api.example.test/v1'],
    ['https://api.example.test/rf_secretsecretsecretsecretsecret12/v1', 'https://api.example.test/rf_…/v1'],
    ['http://127.0.0.1:4000/v1', 'http://127.0.0.1:4000/v1'],
  ])('shows %s as %s: no credentials, query, fragment or key', (given, shown) => {
    expect(displayedUrl(given)).toBe(shown);
  });

  it('says "the API base URL" when there is none to show', () => {
    expect(displayedUrl(undefined)).toBe('the API base URL');
    expect(displayedUrl('not a url')).toBe('the API base URL');
  });
});
