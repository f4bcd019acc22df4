import { describe, expect, it } from 'vitest';
import { call, callJson, startEmulator } from './harness.js';
import type { PlanData } from './wire.js';

describe('authentication (service.md §1.6)', () => {
  it('answers 401 "Missing API key" without an Authorization header', async () => {
    const emulator = await startEmulator();
    const response = await fetch(`${emulator.url}/openapi/workflows`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      statusCode: 401,
      message: 'Missing API key (use Authorization: Bearer <API_KEY>)',
      error: 'Unauthorized',
    });
  });

  it('counts a token that does not start with rf_ as missing', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson(emulator, '/openapi/workflows', { headers: { Authorization: 'Bearer sk_123' } });
    expect(status).toBe(401);
    expect(body.message).toBe('Missing API key (use Authorization: Bearer <API_KEY>)');
  });

  it('answers 401 "Invalid API key" for a wrong rf_ key', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson(emulator, '/openapi/workflows', { headers: { Authorization: 'Bearer rf_wrong' } });
    expect(status).toBe(401);
    expect(body).toEqual({ statusCode: 401, message: 'Invalid API key', error: 'Unauthorized' });
  });

  it('accepts the Bearer scheme in any case', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson(emulator, '/openapi/workflows', { headers: { Authorization: `bEaReR ${emulator.apiKey}` } });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
  });

  it('uses the configured apiKey, and generates an rf_ key with 32 base62 characters otherwise', async () => {
    const configured = await startEmulator({ apiKey: 'rf_configuredKey0123456789abcdefghijk' });
    expect(configured.apiKey).toBe('rf_configuredKey0123456789abcdefghijk');
    expect((await callJson(configured, '/openapi/workflows')).status).toBe(200);
    const generated = await startEmulator();
    expect(generated.apiKey).toMatch(/^rf_[A-Za-z0-9]{32}$/);
  });
});

describe('envelopes and error shapes', () => {
  it('wraps a success in {success: true, data} (service.md §1.1)', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson<PlanData>(emulator, '/openapi/workflows/c-sample-linear');
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.data?.title).toBe('Research brief (linear chain)');
  });

  it('answers unknown canvases and executions with HTTP 200 business errors on the service (service.md §1.2)', async () => {
    const emulator = await startEmulator();
    const canvas = await callJson(emulator, '/openapi/workflows/c-missing');
    expect(canvas.status).toBe(200);
    expect(canvas.body).toMatchObject({ success: false, errCode: 'E1000', errMsg: 'Canvas not found, please refresh' });
    expect(canvas.body.traceId).toMatch(/^[0-9a-f]{32}$/);
    for (const action of ['status', 'output']) {
      const execution = await callJson(emulator, `/openapi/workflow/we-missing/${action}`);
      expect(execution.status).toBe(200);
      expect(execution.body).toMatchObject({ success: false, errCode: 'E1021', errMsg: 'Workflow execution not found, please refresh' });
    }
    const runMissing = await callJson(emulator, '/openapi/workflow/c-missing/run', { body: {} });
    expect(runMissing.body).toMatchObject({ success: false, errCode: 'E1000' });
  });

  it('answers the same errors with HTTP 404 and the envelope in the spec profile', async () => {
    const emulator = await startEmulator({ profile: 'spec' });
    const canvas = await callJson(emulator, '/openapi/workflows/c-missing');
    expect(canvas.status).toBe(404);
    expect(canvas.body).toMatchObject({ success: false, errCode: 'E1000', errMsg: 'Canvas not found, please refresh' });
    const execution = await callJson(emulator, '/openapi/workflow/we-missing/abort', { method: 'POST' });
    expect(execution.status).toBe(404);
    expect(execution.body).toMatchObject({ success: false, errCode: 'E1021' });
  });

  it('answers an unexpected server fault with E0000 (HTTP 200 on the service, 500 in the spec profile)', async () => {
    const service = await startEmulator();
    service.faults.add({ kind: 'internal', endpoint: 'search' });
    const answered = await callJson(service, '/openapi/workflows');
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ success: false, errCode: 'E0000', errMsg: 'An unknown error has occurred. Please try again later.' });
    const spec = await startEmulator({ profile: 'spec' });
    spec.faults.add({ kind: 'internal' });
    expect((await callJson(spec, '/openapi/workflows')).status).toBe(500);
  });

  it('answers an unknown route with the framework 404 body, before auth', async () => {
    const emulator = await startEmulator();
    const response = await fetch(`${emulator.url}/openapi/nothing-here`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, message: 'Cannot GET /v1/openapi/nothing-here', error: 'Not Found' });
    const wrongMethod = await call(emulator, '/openapi/workflow/c-sample-linear/run', { method: 'GET' });
    expect(wrongMethod.status).toBe(404);
  });
});
