import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import { normalizedBasePath, routeOf } from '../../src/relay/relay-routes.js';
import { createRunRelay, type RunRelayOptions } from '../../src/relay/run-relay.js';
import { createRunTokens } from '../../src/relay/run-tokens.js';

describe('routeOf', () => {
  it.each([
    ['GET', '/flowstream/executions/we-1/events', { kind: 'events', executionId: 'we-1' }],
    ['GET', '/flowstream/executions/we%2F1/events', { kind: 'events', executionId: 'we/1' }],
    ['POST', '/flowstream/executions/we-1/cancel', { kind: 'cancel', executionId: 'we-1' }],
    ['POST', '/flowstream/runs', { kind: 'start' }],
    ['OPTIONS', '/flowstream/executions/we-1/events', { kind: 'preflight' }],
    ['POST', '/flowstream/executions/we-1/events', { kind: 'method-not-allowed', allow: 'GET, OPTIONS' }],
    ['GET', '/flowstream/runs', { kind: 'method-not-allowed', allow: 'POST, OPTIONS' }],
    ['GET', '/executions/we-1/events', { kind: 'not-found' }],
    ['GET', '/flowstream/executions//events', { kind: 'not-found' }],
    ['GET', '/flowstream/executions/%E0%A4%A/events', { kind: 'not-found' }],
    ['GET', '/flowstream/executions/we-1/events/more', { kind: 'not-found' }],
    ['GET', '/flowstreamx/executions/we-1/events', { kind: 'not-found' }],
  ])('%s %s', (method, path, route) => {
    expect(routeOf(method, path, '/flowstream')).toEqual(route);
  });

  it('takes the base path with or without its slashes, and the root as ""', () => {
    expect(['flowstream', '/flowstream', '/flowstream/'].map(normalizedBasePath)).toEqual(['/flowstream', '/flowstream', '/flowstream']);
    expect([undefined, '', '/'].map(normalizedBasePath)).toEqual(['', '', '']);
    expect(routeOf('GET', '/executions/we-1/events', '')).toEqual({ kind: 'events', executionId: 'we-1' });
  });
});

describe('createRunRelay options', () => {
  const client = createClient({ apiKey: 'rf_00000000000000000000000000000000', baseUrl: 'http://127.0.0.1:1/v1', budget: false });
  const tokens = createRunTokens({ secret: 'a secret of thirty-two bytes or more' });
  it.each<[string, Partial<RunRelayOptions>]>([
    ['keepFinishedMs', { keepFinishedMs: -1 }],
    ['keepFinishedMs', { keepFinishedMs: Number.NaN }],
    ['keepIdleMs', { keepIdleMs: -1 }],
    ['keepIdleMs', { keepIdleMs: Number.NaN }],
    ['keepIdleMs', { keepIdleMs: Number.POSITIVE_INFINITY }],
    ['keepIdleMs', { keepIdleMs: 2 ** 31 }],
    ['keepIdleMs', { keepIdleMs: '60000' as never }],
    // null from untyped configuration (JSON, YAML) is a wrong value, not "the default".
    ['keepIdleMs', { keepIdleMs: null as never }],
    ['keepFinishedMs', { keepFinishedMs: null as never }],
    ['heartbeatMs', { heartbeatMs: null as never }],
    ['retryMs', { retryMs: null as never }],
    ['tokenTtlMs', { tokenTtlMs: null as never }],
    ['snapshotAfter', { snapshotAfter: null as never }],
    ['scheduler', { scheduler: null as never }],
    ['basePath', { basePath: null as never }],
    ['hub', { hub: null as never }],
    ['heartbeatMs', { heartbeatMs: 0 }],
    ['retryMs', { retryMs: Number.POSITIVE_INFINITY }],
    ['tokenTtlMs', { tokenTtlMs: -5 }],
    ['snapshotAfter', { snapshotAfter: 1.5 }],
    ['start', { start: 'c-1' as never }],
    // One origin as a string would be matched as text: 'https://app.example' would let in 'https://app.ex'.
    ['cors', { cors: { origins: 'https://app.example' as never } }],
    ['cors', { cors: { origins: [new URL('https://app.example')] as never } }],
    ['cors', { cors: 'https://app.example' as never }],
    ['cors', { cors: { origins: '*', maxAgeSeconds: -1 } }],
  ])('refuses a bad %s with InvalidArgumentError', (argument, options) => {
    let error: unknown;
    try {
      createRunRelay({ client, tokens, ...options });
    } catch (caught) {
      error = caught;
    }
    expect(isInvalidArgumentError(error) && error.argument === argument).toBe(true);
  });

  it.each<[string, () => unknown]>([
    ['options', () => createRunRelay(undefined as never)],
    ['client', () => createRunRelay({ tokens } as never)],
    ['tokens', () => createRunRelay({ client } as never)],
    ['tokens', () => createRunRelay({ client, tokens: 'the secret' as never })],
    ['basePath', () => createRunRelay({ client, tokens, basePath: 8080 as never })],
  ])('refuses a missing or wrong %s with InvalidArgumentError, not a TypeError', (argument, create) => {
    expect(create).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });
});
