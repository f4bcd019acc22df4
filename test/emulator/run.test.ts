import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/emulator/index.js';
import { call, callJson, startEmulator } from './harness.js';
import type { RunData, UploadData } from './wire.js';

const runPath = '/openapi/workflow/c-sample-variables/run';

describe('run body (service.md §5.4)', () => {
  it('accepts no body, {} and {"variables": {…}}, ignoring keys next to variables', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock });
    const empty = await call(emulator, runPath, { method: 'POST' });
    expect(((await empty.json()) as { success: boolean }).success).toBe(true);
    // Past the duplicate window: no body and {} are the same run (service.md §2.2).
    clock.advance(1_000);
    for (const body of [{}, { variables: { topic: 'AI' } }, { variables: { topic: 'AI' }, extra: true }]) {
      const { status, body: answer } = await callJson<RunData>(emulator, runPath, { body });
      expect(status).toBe(200);
      expect(answer.success).toBe(true);
    }
  });

  it('refuses top-level variables with 400 on the service', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson(emulator, runPath, { body: { topic: 'AI' } });
    expect(status).toBe(400);
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(body.message).toMatch(/variables/);
  });

  it('accepts top-level variables in the spec profile, and answers a documented status', async () => {
    const emulator = await startEmulator({ profile: 'spec' });
    const { status, body } = await callJson<RunData>(emulator, runPath, { body: { topic: 'AI' } });
    expect(status).toBe(200);
    expect(body.data?.status).toBe('executing');
    const view = emulator.executions.get(body.data?.executionId ?? '');
    expect(view?.variables).toEqual([{ name: 'topic', kind: 'text', value: 'AI' }]);
    const empty = await callJson<RunData>(emulator, '/openapi/workflow/c-sample-empty/run', { body: {} });
    expect(empty.body.data?.status).toBe('finish');
  });

  it('refuses bad JSON, a non-object body and non-object variables with 400', async () => {
    const emulator = await startEmulator();
    const badJson = await callJson(emulator, runPath, { body: '{"variables":' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toBe('Bad Request');
    expect((await callJson(emulator, runPath, { body: [1, 2] })).status).toBe(400);
    expect((await callJson(emulator, runPath, { body: { variables: 'x' } })).status).toBe(400);
  });

  it('reads variable values as the service does: text, JSON text, fileKeys and lists of fileKeys (service.md §5.5)', async () => {
    const emulator = await startEmulator();
    const form = new FormData();
    form.append('files', new Blob(['attachment body']), 'notes.txt');
    const uploaded = await callJson<UploadData>(emulator, '/openapi/files/upload', { body: form });
    const fileKey = uploaded.body.data?.files[0]?.fileKey ?? '';
    const variables = { topic: 'AI', count: 3, flag: true, config: { a: 1 }, attachment: fileKey, both: [fileKey, 'of_unknownKey'], mixed: [fileKey, 'text'], pun: 'of_course' };
    const { body } = await callJson<RunData>(emulator, runPath, { body: { variables } });
    expect(body.success).toBe(true);
    expect(emulator.executions.get(body.data?.executionId ?? '')?.variables).toEqual([
      { name: 'topic', kind: 'text', value: 'AI' },
      { name: 'count', kind: 'text', value: '3' },
      { name: 'flag', kind: 'text', value: 'true' },
      { name: 'config', kind: 'text', value: '{"a":1}' },
      { name: 'attachment', kind: 'files', files: [{ fileKey, fileName: 'notes.txt' }] },
      { name: 'both', kind: 'files', files: [{ fileKey, fileName: 'notes.txt' }, { fileKey: 'of_unknownKey', fileName: undefined }] },
      { name: 'mixed', kind: 'text', value: JSON.stringify([fileKey, 'text']) },
      { name: 'pun', kind: 'files', files: [{ fileKey: 'of_course', fileName: undefined }] },
    ]);
  });

  it('forgets uploads after 24 h of emulator time unless uploaded again, without failing the run (service.md §5.5, §5.6)', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock, rateLimit: false });
    const uploadNotes = async (): Promise<string> => {
      const form = new FormData();
      form.append('files', new Blob(['notes']), 'notes.txt');
      return (await callJson<UploadData>(emulator, '/openapi/files/upload', { body: form })).body.data?.files[0]?.fileKey ?? '';
    };
    const fileKey = await uploadNotes();
    const fileNameSeen = async (): Promise<string | undefined> => {
      const { body } = await callJson<RunData>(emulator, runPath, { body: { variables: { attachment: fileKey, at: clock.now() } } });
      const variable = emulator.executions.get(body.data?.executionId ?? '')?.variables[0];
      return variable?.kind === 'files' ? variable.files[0]?.fileName : 'not a file';
    };
    clock.advance(23 * 60 * 60 * 1_000);
    expect(await uploadNotes()).toBe(fileKey);
    clock.advance(23 * 60 * 60 * 1_000);
    expect(await fileNameSeen()).toBe('notes.txt');
    clock.advance(60 * 60 * 1_000);
    expect(await fileNameSeen()).toBeUndefined();
  });

  it('does not check required variables (service.md §5.4)', async () => {
    const emulator = await startEmulator();
    expect((await callJson(emulator, runPath, { body: {} })).body.success).toBe(true);
  });
});

describe('duplicate-run window (service.md §2.2)', () => {
  const conflict = { statusCode: 409, message: 'Duplicate request detected. Please wait before retrying.', error: 'Conflict' };

  it('refuses an identical run within 1 s with 409, and accepts it after', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock });
    expect((await callJson(emulator, runPath, { body: { variables: { topic: 'a' } } })).status).toBe(200);
    clock.advance(999);
    const duplicate = await callJson(emulator, runPath, { body: { variables: { topic: 'a' } } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual(conflict);
    clock.advance(1);
    expect((await callJson(emulator, runPath, { body: { variables: { topic: 'a' } } })).status).toBe(200);
  });

  it('tells runs apart by canvas and exact body, key order included', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock });
    expect((await callJson(emulator, runPath, { body: '{"variables":{"topic":"a","tone":"formal"}}' })).status).toBe(200);
    expect((await callJson(emulator, runPath, { body: '{"variables":{"tone":"formal","topic":"a"}}' })).status).toBe(200);
    expect((await callJson(emulator, runPath, { body: '{"variables":{"topic":"b","tone":"formal"}}' })).status).toBe(200);
    expect((await callJson(emulator, '/openapi/workflow/c-sample-linear/run', { body: '{"variables":{"topic":"a","tone":"formal"}}' })).status).toBe(200);
    expect((await callJson(emulator, runPath, { body: '{"variables":{"topic":"a","tone":"formal"}}' })).status).toBe(409);
  });

  it('sets the mark before validation: a failed run blocks its identical retry', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock });
    const missing = await callJson(emulator, '/openapi/workflow/c-missing/run', { body: {} });
    expect(missing.body.errCode).toBe('E1000');
    expect((await callJson(emulator, '/openapi/workflow/c-missing/run', { body: {} })).status).toBe(409);
    const invalid = await callJson(emulator, runPath, { body: { topic: 'top-level' } });
    expect(invalid.status).toBe(400);
    expect((await callJson(emulator, runPath, { body: { topic: 'top-level' } })).status).toBe(409);
  });

  it('treats no body and {} as the same run', async () => {
    const emulator = await startEmulator({ clock: createManualClock() });
    expect((await call(emulator, runPath, { method: 'POST' })).status).toBe(200);
    expect((await callJson(emulator, runPath, { body: {} })).status).toBe(409);
  });
});
