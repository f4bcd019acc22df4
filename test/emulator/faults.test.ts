import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/emulator/index.js';
import { call, callJson, pollUntil, run, startEmulator } from './harness.js';
import type { StatusData } from './wire.js';

describe('fault injection', () => {
  it('adds latency: a delayed request answers after a later, undelayed one', async () => {
    const emulator = await startEmulator();
    // Far longer than any request takes, so the outcome does not depend on the machine's speed.
    const latency = emulator.faults.add({ kind: 'latency', ms: 60_000, endpoint: 'detail' });
    const order: string[] = [];
    const slow = call(emulator, '/openapi/workflows/c-sample-linear').then(
      () => order.push('detail'),
      () => order.push('detail cut short'),
    );
    // The fault is claimed when the request arrives: from then on it is waiting.
    await pollUntil(() => Promise.resolve(latency.hits), (hits) => hits === 1);
    await call(emulator, '/openapi/workflows').then(() => order.push('search'));
    expect(order).toEqual(['search']);
    await emulator.close(); // cuts the injected latency short
    await slow;
    expect(order[0]).toBe('search');
  });

  it('answers 5xx with the framework body before the request reaches the service', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'status', status: 503, endpoint: 'run' });
    const { status, body } = await callJson(emulator, '/openapi/workflow/c-sample-linear/run', { body: {} });
    expect(status).toBe(503);
    expect(body).toEqual({ statusCode: 503, message: 'Service Unavailable', error: 'Service Unavailable' });
    expect(emulator.executions.list()).toEqual([]);
  });

  it('answers 5xx after handling with after: true, so the run did start', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'status', status: 502, body: '<html>Bad Gateway</html>', endpoint: 'run', after: true });
    const response = await call(emulator, '/openapi/workflow/c-sample-linear/run', { body: {} });
    expect(response.status).toBe(502);
    expect(await response.text()).toBe('<html>Bad Gateway</html>');
    expect(emulator.executions.list()).toHaveLength(1);
    expect(emulator.requests.list({ endpoint: 'run' })[0]?.executionId).toBe(emulator.executions.list()[0]?.executionId);
  });

  it('drops the connection over HTTP: fetch rejects with a TypeError', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'drop', endpoint: 'status' });
    await expect(call(emulator, '/openapi/workflow/we-x/status')).rejects.toThrow(TypeError);
    expect(emulator.requests.list({ endpoint: 'status' })[0]?.status).toBe(0);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
  });

  it('drops the connection in-process: the emulator fetch rejects with a TypeError', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'drop', endpoint: 'run', after: true });
    await expect(call(emulator, '/openapi/workflow/c-sample-linear/run', { body: {}, transport: 'in-process' })).rejects.toThrow(TypeError);
    expect(emulator.executions.list()).toHaveLength(1);
  });

  it('sends malformed JSON', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'malformed', endpoint: 'search' });
    const response = await call(emulator, '/openapi/workflows');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    await expect(response.json()).rejects.toThrow(SyntaxError);
  });

  it('drifts the schema: unknown status values and extra fields', async () => {
    const emulator = await startEmulator();
    const id = await run(emulator, 'c-sample-linear');
    emulator.faults.add({ kind: 'drift', unknownStatus: 'paused', endpoint: 'status' });
    const { body } = await callJson<StatusData>(emulator, `/openapi/workflow/${id}/status`);
    expect(body.data?.status).toBe('paused');
    expect(body.data?.nodeExecutions.every((node) => node.status === 'paused')).toBe(true);
    expect(body).toHaveProperty('x-emulator-drift', 'unexpected');
    expect(body.data?.nodeExecutions[0]).toHaveProperty('x-emulator-drift', 'unexpected');
  });

  it('bursts account-limit 429s with the limit headers and no Retry-After', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'rate-limit', times: 2 });
    for (let i = 0; i < 2; i += 1) {
      const refused = await callJson(emulator, '/openapi/workflows');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ statusCode: 429, message: 'Rate limit exceeded: 100 requests per minute', error: 'Too Many Requests' });
      expect(refused.headers.get('x-ratelimit-remaining-rpm')).toBe('0');
      expect(refused.headers.get('retry-after')).toBeNull();
    }
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
  });

  it('bursts IP-throttler 429s: a bare JSON string body with Retry-After', async () => {
    const emulator = await startEmulator();
    emulator.faults.add({ kind: 'rate-limit', variant: 'throttler', retryAfterSeconds: 7 });
    const response = await call(emulator, '/openapi/workflows');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toBe('ThrottlerException: Too Many Requests');
  });

  it('applies to the next N matching requests only, then stops', async () => {
    const emulator = await startEmulator();
    const fault = emulator.faults.add({ kind: 'status', status: 500, endpoint: ['search', 'detail'], times: 2 });
    expect((await call(emulator, '/openapi/workflow/we-x/status')).status).toBe(200);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(500);
    expect((await call(emulator, '/openapi/workflows/c-sample-linear')).status).toBe(500);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    expect([fault.hits, fault.remaining, fault.active]).toEqual([2, 0, false]);
  });

  it('lets the first N matching requests through with skip, then applies', async () => {
    const emulator = await startEmulator();
    const fault = emulator.faults.add({ kind: 'status', status: 503, endpoint: 'search', skip: 2, times: 1 });
    expect((await call(emulator, '/openapi/workflows/c-sample-linear')).status).toBe(200);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(503);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    expect([fault.hits, fault.remaining]).toEqual([1, 0]);
  });

  it('switches at runtime: disable, enable, remove, clear', async () => {
    const emulator = await startEmulator();
    const fault = emulator.faults.add({ kind: 'status', status: 500, enabled: false });
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    fault.enable();
    expect((await call(emulator, '/openapi/workflows')).status).toBe(500);
    fault.disable();
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    fault.enable();
    fault.remove();
    expect(emulator.faults.list()).toEqual([]);
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
    emulator.faults.add({ kind: 'status', status: 500 });
    emulator.faults.clear();
    expect((await call(emulator, '/openapi/workflows')).status).toBe(200);
  });

  it('refuses a fault spec that makes no sense', async () => {
    const emulator = await startEmulator();
    expect(() => emulator.faults.add({ kind: 'status', status: 200 })).toThrow(RangeError);
    expect(() => emulator.faults.add({ kind: 'latency', ms: -1 })).toThrow(RangeError);
    expect(() => emulator.faults.add({ kind: 'drop', times: 1.5 })).toThrow(RangeError);
    expect(() => emulator.faults.add({ kind: 'drop', skip: -1 })).toThrow(RangeError);
  });
});

describe('request log', () => {
  it('records every request with its endpoint, status, times and subject, and can be filtered and cleared', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock });
    const fault = emulator.faults.add({ kind: 'latency', ms: 0, endpoint: 'search' });
    const id = await run(emulator, 'c-sample-linear');
    clock.advance(1_000);
    await call(emulator, `/openapi/workflow/${id}/status`);
    await call(emulator, '/openapi/workflows?keyword=report');
    await call(emulator, '/openapi/workflow/we-missing/output');
    await fetch(`${emulator.url}/openapi/workflows`, { method: 'OPTIONS' });
    const all = emulator.requests.list();
    expect(all.map((record) => [record.sequence, record.method, record.endpoint, record.status])).toEqual([
      [1, 'POST', 'run', 200],
      [2, 'GET', 'status', 200],
      [3, 'GET', 'search', 200],
      [4, 'GET', 'output', 200],
      [5, 'OPTIONS', 'preflight', 204],
    ]);
    expect(all[0]).toMatchObject({ path: '/v1/openapi/workflow/c-sample-linear/run', executionId: id, canvasId: 'c-sample-linear', errCode: undefined });
    expect(all[1]?.emulatorTime).toBe((all[0]?.emulatorTime ?? 0) + 1_000);
    expect(typeof all[1]?.realTime).toBe('number');
    expect(all[2]).toMatchObject({ query: '?keyword=report', faults: [fault.id] });
    expect(all[3]).toMatchObject({ executionId: 'we-missing', errCode: 'E1021' });
    expect(emulator.requests.list({ executionId: id }).map((record) => record.endpoint)).toEqual(['run', 'status']);
    expect(emulator.requests.list({ endpoint: ['search', 'output'], method: 'get' })).toHaveLength(2);
    expect(emulator.requests.list({ after: 3 }).map((record) => record.sequence)).toEqual([4, 5]);
    expect(emulator.requests.list({ status: 204 })).toHaveLength(1);
    emulator.requests.clear();
    expect(emulator.requests.list()).toEqual([]);
  });
});
