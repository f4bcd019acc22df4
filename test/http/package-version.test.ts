import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PACKAGE_VERSION } from '../../src/http/package-version.js';
import { clientFor } from './support/client.js';
import { ok, startServer } from './support/loopback-server.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('the version the client names', () => {
  it('is package.json\'s (src/http/package-version.ts is generated from it: npm run build, npm version)', () => {
    expect(PACKAGE_VERSION).toBe(version);
  });

  it('is sent in the User-Agent', async () => {
    const server = await startServer((_request, response) => {
      ok(response, { executionId: 'we-1', status: 'executing', nodeExecutions: [] });
    });
    await clientFor(server.origin).executions.status('we-1');
    expect(server.requests[0]?.headers['user-agent']).toBe(`flowstream/${version}`);
  });
});
