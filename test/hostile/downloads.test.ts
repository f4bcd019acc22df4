import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';
import { isDownloadError } from '../../src/errors/download-error.js';
import { downloadFile, openFile } from '../../src/http/download.js';
import { MAX_UPLOAD_BYTES } from '../../src/http/upload-source.js';
import { transferFiles } from '../../src/pipeline/transfer-files.js';
import { startServer } from '../http/support/loopback-server.js';

// File hosts are not the API: they may send without end, stall, or lie about sizes.

const MiB = 1024 * 1024;

/** Streams `total` bytes in 64 KiB chunks, without a Content-Length, as long as the client reads. */
function endless(total: number) {
  return startServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    let sent = 0;
    const write = (): void => {
      while (sent < total) {
        const chunk = Buffer.alloc(Math.min(64 * 1024, total - sent), 1);
        sent += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', write);
          return;
        }
      }
      response.end();
    };
    response.on('error', () => undefined);
    write();
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('downloads are bounded', () => {
  it('stops a file past maxBytes with DownloadError (too-large)', async () => {
    const server = await endless(8 * MiB);
    const error: unknown = await downloadFile(`${server.origin}/file.bin`, { maxBytes: MiB }).catch((caught: unknown) => caught);
    expect(isDownloadError(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'too-large', maxBytes: MiB });
  });

  it('refuses at once a file whose declared length is over maxBytes', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-length': String(10 * MiB) });
      response.write(Buffer.alloc(1024));
    });
    await expect(openFile(`${server.origin}/file.bin`, { maxBytes: MiB })).rejects.toMatchObject({ code: 'DOWNLOAD_FAILED', reason: 'too-large' });
  });

  it('has a default deadline that covers the body: a host that stalls mid-file ends in DownloadError (timeout)', async () => {
    const clock = createManualClock();
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('the first half, and then nothing');
    });
    const download = downloadFile(`${server.origin}/file.txt`, { scheduler: clockScheduler(clock) }).catch((caught: unknown) => caught);
    await vi.waitFor(() => { expect(server.requests).toHaveLength(1); });
    clock.advance(5 * 60_000 - 1);
    expect(await Promise.race([download, new Promise((resolve) => { setImmediate(() => { resolve('still waiting'); }); })])).toBe('still waiting');
    clock.advance(1);
    const error = await download;
    expect(isDownloadError(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'timeout' });
  });

  it('leaves no timer and no listener behind when the caller aborts a body nobody reads', async () => {
    const clock = createManualClock();
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('the first half, and then nothing');
    });
    const caller = new AbortController();
    const response = await openFile(`${server.origin}/file.txt`, { signal: caller.signal, scheduler: clockScheduler(clock) });
    expect(response.ok).toBe(true);
    expect(clock.nextTimerAt()).toBeDefined();
    caller.abort();
    expect(clock.nextTimerAt()).toBeUndefined();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('refuses, from JavaScript, null options or a signal that is not an AbortSignal with InvalidArgumentError, fetching nothing', async () => {
    const fetch = vi.fn<typeof globalThis.fetch>(() => Promise.reject(new Error('nothing may be fetched')));
    await expect(downloadFile({ url: 'http://127.0.0.1:9/r.md' }, { fetch, signal: new AbortController() as unknown as AbortSignal })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'signal' });
    await expect(openFile({ url: 'http://127.0.0.1:9/r.md' }, { fetch, signal: {} as AbortSignal })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'signal' });
    await expect(downloadFile({ url: 'http://127.0.0.1:9/r.md' }, null as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options' });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('reads a file under the limits whole', async () => {
    const server = await endless(3 * MiB);
    const blob = await downloadFile(`${server.origin}/file.bin`, { maxBytes: 3 * MiB });
    expect(blob.size).toBe(3 * MiB);
  });

  it('fetches a self-hosted service\'s localhost URL where rewriteUrl says', async () => {
    const server = await startServer((_request, response) => {
      response.end('hello');
    });
    const blob = await downloadFile({ url: 'http://localhost:1/v1/drive/file/public/df-1/a.txt' }, { rewriteUrl: (url) => url.replace('http://localhost:1', server.origin) });
    await expect(blob.text()).resolves.toBe('hello');
    expect(server.requests[0]?.url).toBe('/v1/drive/file/public/df-1/a.txt');
  });
});

describe('a file headed for an upload', () => {
  it('is not fetched whole before the 50 MiB limit refuses it: reading stops at the limit, nothing is uploaded', async () => {
    const server = await endless(MAX_UPLOAD_BYTES + 20 * MiB);
    const upload = vi.fn(() => Promise.resolve([]));
    const error: unknown = await transferFiles({ files: { upload } }, [{ name: 'big.bin', type: 'application/octet-stream', url: `${server.origin}/big.bin` }]).catch((caught: unknown) => caught);
    expect(isDownloadError(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'too-large', maxBytes: MAX_UPLOAD_BYTES });
    expect(upload).not.toHaveBeenCalled();
  });
});
