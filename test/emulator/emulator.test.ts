import { describe, expect, it } from 'vitest';
import { createEmulator, createManualClock } from '../../src/emulator/index.js';
import { call, callJson, startEmulator } from './harness.js';
import type { OutputData, RunData, SearchData, StatusData } from './wire.js';

describe('the emulator process', () => {
  it('serves on 127.0.0.1 with an ephemeral port and a /v1 base', async () => {
    const emulator = await startEmulator();
    expect(emulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(new URL(emulator.url).port).not.toBe('0');
  });

  it('serves on the configured port', async () => {
    const probe = await startEmulator();
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const emulator = await startEmulator({ port });
    expect(emulator.url).toBe(`http://127.0.0.1:${String(port)}/v1`);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
  });

  it('serves the same app in-process, and without a socket when listen is false', async () => {
    const emulator = await startEmulator({ listen: false });
    expect(emulator.url).toBe('http://127.0.0.1/v1');
    const response = await emulator.fetch(`${emulator.url}/openapi/workflows?pageSize=1`, { headers: { Authorization: `Bearer ${emulator.apiKey}` } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: SearchData }).data).toHaveLength(1);
    await expect(emulator.fetch('http://example.com/v1/openapi/workflows')).rejects.toThrow(TypeError);
  });

  it('runs a whole execution in-process: run, status, output and the file link', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock, listen: false });
    const id = (await callJson<RunData>(emulator, '/openapi/workflow/c-sample-files/run', { body: {}, transport: 'in-process' })).body.data?.executionId ?? '';
    // The report runs 1.5–6.5 s, the chart 7.5–11.5 s (each starts on a poll tick); finish on the tick at 12 s.
    clock.advance(12_000);
    const status = await callJson<StatusData>(emulator, `/openapi/workflow/${id}/status`, { transport: 'in-process' });
    expect(status.body.data?.status).toBe('finish');
    const output = await callJson<OutputData>(emulator, `/openapi/workflow/${id}/output`, { transport: 'in-process' });
    const report = output.body.data?.files.find((file) => file.name === 'report.md');
    expect(report?.url.startsWith('http://127.0.0.1/v1/drive/file/public/')).toBe(true);
    expect(await (await emulator.fetch(report?.url ?? '')).text()).toContain('Quarterly report');
    expect(emulator.requests.list().map((record) => record.endpoint)).toEqual(['run', 'status', 'output', 'file']);
  });

  it('honours an aborted signal on the in-process fetch', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'latency', ms: 5_000 });
    const controller = new AbortController();
    const pending = emulator.fetch(`${emulator.url}/openapi/workflows`, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toThrow();
  });

  it('closes the server, its connections and pending latency; fetch then fails', async () => {
    const emulator = await createEmulator();
    emulator.faults.add({ kind: 'latency', ms: 60_000 });
    const pending = emulator.fetch(`${emulator.url}/openapi/workflows`);
    const pendingHttp = fetch(`${emulator.url}/openapi/workflows`);
    await emulator.close();
    await expect(pending).rejects.toThrow(TypeError);
    await expect(pendingHttp).rejects.toThrow(TypeError);
    await expect(fetch(`${emulator.url}/openapi/workflows`)).rejects.toThrow(TypeError);
    await expect(emulator.fetch(`${emulator.url}/openapi/workflows`)).rejects.toThrow(TypeError);
    await emulator.close();
  });

  it('can leave out the samples and seed its own workflows', async () => {
    const emulator = await startEmulator({ samples: false, workflows: [{ canvasId: 'c-mine', title: 'Mine', nodes: [] }] });
    expect((await callJson<SearchData>(emulator, '/openapi/workflows')).body.data).toEqual([{ canvasId: 'c-mine', title: 'Mine' }]);
  });

  it('adds, lists, gets and removes workflows at runtime', async () => {
    const emulator = await startEmulator({ samples: false, clock: createManualClock() });
    const canvasId = emulator.workflows.add({ title: 'Generated id', nodes: [{ id: 'node-a' }] });
    expect(canvasId).toMatch(/^c-[a-z0-9]{24}$/);
    expect(emulator.workflows.list().map((stored) => stored.workflow.canvasId)).toEqual([canvasId]);
    expect(emulator.workflows.get(canvasId)?.workflow.nodes[0]).toMatchObject({ id: 'node-a', type: 'task', durationMs: 5_000 });
    expect(() => emulator.workflows.add({ canvasId, nodes: [] })).toThrow(/already exists/);
    expect(emulator.workflows.remove(canvasId)).toBe(true);
    expect(emulator.workflows.remove(canvasId)).toBe(false);
    expect((await callJson(emulator, `/openapi/workflows/${canvasId}`)).body.errCode).toBe('E1000');
  });

  it('refuses bad options', async () => {
    await expect(createEmulator({ apiKey: 'sk_nope', listen: false })).rejects.toThrow(/rf_/);
    await expect(createEmulator({ speed: 0, listen: false })).rejects.toThrow(RangeError);
    // From JavaScript: a profile it does not have, or a misspelt option (which would leave the rate limit on), is refused.
    await expect(createEmulator({ profile: 'production' as 'spec', listen: false })).rejects.toThrow(/profile must be 'service' or 'spec'/);
    await expect(createEmulator({ rateLimt: false, listen: false } as never)).rejects.toThrow(/no option "rateLimt"/);
    await expect(createEmulator({ listen: false, workflows: [{ nodes: [{ id: 'a', parents: ['b'] }] }] })).rejects.toThrow(/unknown parent/);
  });
});

describe('CORS for every page (cors: { origins: "*" })', () => {
  it('answers a preflight without auth, allowing Authorization and Content-Type', async () => {
    const emulator = await startEmulator({ cors: { origins: '*' } });
    const response = await fetch(`${emulator.url}/openapi/workflow/c-sample-linear/run`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type');
  });

  it('lets a page read every answer, the limit headers and Retry-After included', async () => {
    const emulator = await startEmulator({ cors: { origins: '*' } });
    for (const response of [await call(emulator, '/openapi/workflows'), await fetch(`${emulator.url}/openapi/workflows`)]) {
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const exposed = response.headers.get('access-control-expose-headers') ?? '';
      for (const header of ['X-RateLimit-Limit-RPM', 'X-RateLimit-Remaining-RPM', 'X-RateLimit-Limit-Daily', 'X-RateLimit-Remaining-Daily', 'Retry-After']) {
        expect(exposed).toContain(header);
      }
    }
  });
});
