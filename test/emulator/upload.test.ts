import { describe, expect, it } from 'vitest';
import { MAX_FILES_PER_UPLOAD, MAX_UPLOAD_FILE_BYTES } from '../../src/emulator/index.js';
import { call, callJson, startEmulator } from './harness.js';
import type { UploadData } from './wire.js';

const upload = '/openapi/files/upload';

function formWith(files: { name: string; bytes: Uint8Array<ArrayBuffer> | string }[], field = 'files'): FormData {
  const form = new FormData();
  for (const file of files) form.append(field, new Blob([file.bytes]), file.name);
  return form;
}

describe('upload (service.md §2.3, §5.6)', () => {
  it('answers a fileKey per file, of_ + 22 base64url characters', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson<UploadData>(emulator, upload, { body: formWith([{ name: 'a.txt', bytes: 'alpha' }, { name: 'b.txt', bytes: 'beta' }]) });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.data?.files.map((file) => file.fileName)).toEqual(['a.txt', 'b.txt']);
    for (const file of body.data?.files ?? []) expect(file.fileKey).toMatch(/^of_[A-Za-z0-9_-]{22}$/);
  });

  it('gives the same bytes the same key again, other bytes or another account another key', async () => {
    const emulator = await startEmulator();
    const keyOf = async (target: typeof emulator, bytes: string): Promise<string | undefined> =>
      (await callJson<UploadData>(target, upload, { body: formWith([{ name: 'x.bin', bytes }]) })).body.data?.files[0]?.fileKey;
    const first = await keyOf(emulator, 'same bytes');
    expect(await keyOf(emulator, 'same bytes')).toBe(first);
    expect(await keyOf(emulator, 'other bytes')).not.toBe(first);
    const otherAccount = await startEmulator();
    expect(await keyOf(otherAccount, 'same bytes')).not.toBe(first);
  });

  it('accepts 10 files and refuses 11 with 400 "Unexpected field"', async () => {
    const emulator = await startEmulator();
    const files = (count: number): { name: string; bytes: string }[] => Array.from({ length: count }, (_, index) => ({ name: `f${String(index)}.txt`, bytes: `file ${String(index)}` }));
    const ten = await callJson<UploadData>(emulator, upload, { body: formWith(files(MAX_FILES_PER_UPLOAD)) });
    expect(ten.body.data?.files).toHaveLength(10);
    const eleven = await callJson(emulator, upload, { body: formWith(files(MAX_FILES_PER_UPLOAD + 1)) });
    expect(eleven.status).toBe(400);
    expect(eleven.body).toEqual({ statusCode: 400, message: 'Unexpected field', error: 'Bad Request' });
  });

  it('refuses a file under another field name with 400 "Unexpected field"', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson(emulator, upload, { body: formWith([{ name: 'a.txt', bytes: 'a' }], 'file') });
    expect(status).toBe(400);
    expect(body.message).toBe('Unexpected field');
  });

  it('answers 400 "No files provided" for a form without files and for a body that is not multipart', async () => {
    const emulator = await startEmulator();
    const form = new FormData();
    form.append('note', 'text only');
    const noFiles = await callJson(emulator, upload, { body: form });
    expect(noFiles.status).toBe(400);
    expect(noFiles.body).toEqual({ statusCode: 400, message: 'No files provided', error: 'Bad Request' });
    const json = await callJson(emulator, upload, { body: { files: ['abc'] } });
    expect(json.status).toBe(400);
    expect(json.body.message).toBe('No files provided');
  });

  it('accepts a file of exactly 50 MiB and refuses one byte more with 413 "File too large"', async () => {
    const emulator = await startEmulator();
    const atLimit = new Uint8Array(MAX_UPLOAD_FILE_BYTES).fill(7);
    const accepted = await callJson<UploadData>(emulator, upload, { body: formWith([{ name: 'big.bin', bytes: atLimit }]) });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data?.files[0]?.fileName).toBe('big.bin');
    const overLimit = new Uint8Array(MAX_UPLOAD_FILE_BYTES + 1).fill(7);
    const refused = await callJson(emulator, upload, { body: formWith([{ name: 'bigger.bin', bytes: overLimit }]) });
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({ statusCode: 413, message: 'File too large', error: 'Payload Too Large' });
  });

  it('refuses a body larger than ten files at the limit before reading it', async () => {
    const emulator = await startEmulator();
    const response = await call(emulator, upload, {
      method: 'POST',
      body: 'x',
      headers: { 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': String(11 * MAX_UPLOAD_FILE_BYTES) },
      transport: 'in-process',
    });
    expect(response.status).toBe(413);
  });
});
