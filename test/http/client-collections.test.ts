import { describe, expect, it } from 'vitest';
import { downloadFile, openFile } from '../../src/http/download.js';
import { isDownloadError } from '../../src/errors/download-error.js';
import { isPayloadTooLargeError } from '../../src/errors/api-errors.js';
import { isUploadIncompleteError, type UploadIncompleteError } from '../../src/errors/upload-incomplete-error.js';
import { clientFor } from './support/client.js';
import { API_KEY, json, ok, startServer } from './support/loopback-server.js';

/** The file names of one multipart body, in order. */
function partNames(body: Buffer): string[] {
  return [...body.toString('latin1').matchAll(/name="files"; filename="([^"]+)"/g)].map((match) => match[1] ?? '');
}

/** The service's answer to a file over its limit (service.md §2.3). */
const TOO_LARGE = { statusCode: 413, message: 'File too large', error: 'Payload Too Large' };

describe('uploads', () => {
  it('sends field `files`, splits 23 files into ordered batches of 10, and returns keys in input order (service.md §2.3)', async () => {
    const server = await startServer((request, response) => {
      ok(response, { files: partNames(request.body).map((name) => ({ fileKey: `of_${name}`, fileName: name })) });
    });
    const names = Array.from({ length: 23 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    const sources = names.map((name, i) => (i % 3 === 0 ? new File([name], name) : i % 3 === 1 ? { name, data: new TextEncoder().encode(name) } : { name, data: new Blob([name]), type: 'text/plain' }));
    const uploaded = await clientFor(server.origin).files.upload(sources);
    expect(server.requests.map((r) => partNames(r.body).length)).toEqual([10, 10, 3]);
    expect(server.requests[0]?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(uploaded.map((file) => file.fileName)).toEqual(names);
    expect(uploaded.map((file) => file.fileKey)).toEqual(names.map((name) => `of_${name}`));
  });

  it('keeps the keys of the batches that uploaded when a later batch fails: UploadIncompleteError, the failure its cause', async () => {
    const server = await startServer((request, response, index) => {
      if (index === 2) {
        json(response, 413, TOO_LARGE);
        return;
      }
      ok(response, { files: partNames(request.body).map((name) => ({ fileKey: `of_${name}`, fileName: name })) });
    });
    const names = Array.from({ length: 25 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    const failure: unknown = await clientFor(server.origin).files.upload(names.map((name) => new File([name], name))).catch((error: unknown) => error);
    expect(isUploadIncompleteError(failure)).toBe(true);
    const incomplete = failure as UploadIncompleteError;
    expect(incomplete.uploaded.map((file) => file.fileKey)).toEqual(names.slice(0, 20).map((name) => `of_${name}`));
    expect(incomplete.total).toBe(25);
    expect(isPayloadTooLargeError(incomplete.cause)).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it('rejects with the failure itself when the first batch fails: nothing was uploaded', async () => {
    const server = await startServer((_request, response) => {
      json(response, 413, TOO_LARGE);
    });
    await expect(clientFor(server.origin).files.upload(Array.from({ length: 12 }, (_, i) => new File(['x'], `f${i}.txt`)))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an answer with a different number of files than sent', async () => {
    const server = await startServer((_r, response) => { ok(response, { files: [] }); });
    await expect(clientFor(server.origin).files.upload([new File(['x'], 'x.txt')])).rejects.toMatchObject({ code: 'RESPONSE_VALIDATION', endpoint: 'upload' });
  });
});

describe('list pages through every workflow (service.md §5.1)', () => {
  const all = Array.from({ length: 45 }, (_, i) => ({ canvasId: `c-${i}`, title: `W ${i}` }));

  it('pages 45 workflows by 20 and stops at the first short page', async () => {
    const server = await startServer((request, response) => {
      const url = new URL(request.url, 'http://x');
      const page = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('pageSize'));
      ok(response, all.slice((page - 1) * size, page * size));
    });
    const seen = [];
    for await (const workflow of clientFor(server.origin).workflows.list({ keyword: 'W' })) seen.push(workflow);
    expect(seen).toEqual(all);
    expect(server.requests.map((r) => r.url)).toEqual([1, 2, 3].map((page) => `/v1/openapi/workflows?keyword=W&page=${page}&pageSize=20`));
  });

  it('asks for one more page when the last one is exactly full, and only one', async () => {
    const server = await startServer((request, response) => {
      const page = Number(new URL(request.url, 'http://x').searchParams.get('page'));
      ok(response, all.slice((page - 1) * 15, page * 15));
    });
    const seen = [];
    for await (const workflow of clientFor(server.origin).workflows.list({ pageSize: 15 })) seen.push(workflow);
    expect(seen).toHaveLength(45);
    expect(server.requests).toHaveLength(4);
  });

  it('stops requesting when the consumer stops early', async () => {
    const server = await startServer((_r, response) => { ok(response, all.slice(0, 20)); });
    for await (const workflow of clientFor(server.origin).workflows.list()) {
      expect(workflow.canvasId).toBe('c-0');
      break;
    }
    expect(server.requests).toHaveLength(1);
  });
});

describe('output file downloads (service.md §4.6)', () => {
  it('fetch the public URL without the API key or any client header, even with the same fetch as the client', async () => {
    const files = await startServer((_r, response) => { response.writeHead(200, { 'content-type': 'text/markdown' }); response.end('# Report'); });
    const api = await startServer((_r, response) => {
      ok(response, { output: [], files: [{ name: 'r.md', type: 'text/markdown', size: 8, url: `${files.origin}/v1/drive/file/public/df-1/r.md` }] });
    });
    const client = clientFor(api.origin, { headers: { 'x-team': 'ops' } });
    const { files: [file] } = await client.executions.output('we-1');
    const blob = await downloadFile(file!);
    expect(await blob.text()).toBe('# Report');
    const headers = files.requests[0]?.headers ?? {};
    expect(headers.authorization).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain(API_KEY);
    expect(headers['x-team']).toBeUndefined();
    expect(api.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('gives a stream through openFile, and a DownloadError with the status on failure', async () => {
    const files = await startServer((request, response) => {
      if (request.url.endsWith('missing')) { response.writeHead(404); response.end(); return; }
      response.end('abc');
    });
    const response = await openFile(`${files.origin}/ok`);
    expect(await new Response(response.body).text()).toBe('abc');
    const error: unknown = await downloadFile({ url: `${files.origin}/missing` }).catch((e: unknown) => e);
    expect(isDownloadError(error)).toBe(true);
    expect(error).toMatchObject({ status: 404, code: 'DOWNLOAD_FAILED' });
  });

  it('refuses a file without a URL, before fetching', async () => {
    await expect(downloadFile({})).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'file.url' });
  });
});
