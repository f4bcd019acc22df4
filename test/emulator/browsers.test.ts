import { describe, expect, it } from 'vitest';
import { call, startEmulator } from './harness.js';

const PAGE = 'http://127.0.0.1:5173';
const OTHER_PAGE = 'http://127.0.0.1:8080';

/** What a browser sends before a call with `Authorization` from a page on `origin`. */
function preflight(url: string, origin: string): Promise<Response> {
  return fetch(url, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' } });
}

const corsHeadersOf = (response: Response): Record<string, string> =>
  Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));

describe('browsers (service.md §1.7): the service profile refuses pages on other origins', () => {
  it('allows nothing to a page’s preflight by default, so the browser never sends the call', async () => {
    const emulator = await startEmulator();
    const response = await preflight(`${emulator.url}/openapi/workflows`, PAGE);
    expect(response.status).toBe(204);
    expect(corsHeadersOf(response)).toEqual({});
    expect(response.headers.get('vary')).toBe('Origin');
    expect(emulator.requests.list({ endpoint: 'preflight' })).toHaveLength(1);
  });

  it('answers a page’s call (handled and counted) without Access-Control-Allow-Origin, so the browser withholds it', async () => {
    const emulator = await startEmulator();
    const response = await call(emulator, '/openapi/workflows', { headers: { Origin: PAGE } });
    expect(response.status).toBe(200);
    expect(corsHeadersOf(response)).toEqual({});
    expect(response.headers.get('x-ratelimit-remaining-rpm')).toBe('99');
    // A server sends no Origin: answered in full, and nothing in it speaks to browsers.
    const fromServer = await call(emulator, '/openapi/workflows');
    expect(fromServer.status).toBe(200);
    expect(corsHeadersOf(fromServer)).toEqual({});
    expect(emulator.requests.list({ endpoint: 'search' }).map((request) => request.status)).toEqual([200, 200]);
  });

  it('answers the pages listed in cors.origins and only those (every page with "*", the spec profile’s default)', async () => {
    const emulator = await startEmulator({ cors: { origins: [PAGE] } });
    const allowed = await preflight(`${emulator.url}/openapi/workflows`, PAGE);
    expect(corsHeadersOf(allowed)).toEqual({
      'access-control-allow-origin': PAGE,
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'Authorization, Content-Type',
      'access-control-max-age': '600',
      'access-control-expose-headers': expect.stringContaining('X-RateLimit-Remaining-RPM') as unknown,
    });
    const call1 = await call(emulator, '/openapi/workflows', { headers: { Origin: PAGE } });
    expect(call1.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(call1.headers.get('vary')).toBe('Origin');

    expect(corsHeadersOf(await preflight(`${emulator.url}/openapi/workflows`, OTHER_PAGE))).toEqual({});
    expect(corsHeadersOf(await call(emulator, '/openapi/workflows', { headers: { Origin: OTHER_PAGE } }))).toEqual({});

    // `'*'` answers every page, and is the spec profile's default.
    for (const emulator of [await startEmulator({ cors: { origins: '*' } }), await startEmulator({ profile: 'spec' })]) {
      const allowed = await preflight(`${emulator.url}/openapi/workflows`, PAGE);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('*');
      expect(allowed.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type');
      const response = await call(emulator, '/openapi/workflows', { headers: { Origin: OTHER_PAGE }, transport: 'in-process' });
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('refuses a cors option that names no origins with a clear error', async () => {
    await expect(startEmulator({ cors: { origins: ['localhost:5173'] } })).rejects.toThrow(/cors\.origins must be '\*' or a list of page origins/u);
    await expect(startEmulator({ cors: { origins: 'any' as '*' } })).rejects.toThrow(TypeError);
  });
});
