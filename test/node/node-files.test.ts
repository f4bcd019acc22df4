import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';
import { downloadToFile, fromPath, fromStream, spoolToDisk } from '../../src/node/index.js';
import { clientFor } from '../http/support/client.js';
import { API_KEY, ok, startServer } from '../http/support/loopback-server.js';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowstream-node-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The file names and contents of one multipart body. */
function parts(body: Buffer): [string, string][] {
  return [...body.toString('utf8').matchAll(/filename="([^"]+)"\r\nContent-Type: [^\r]*\r\n\r\n([^\r]*)\r\n/g)].map((m) => [m[1] ?? '', m[2] ?? '']);
}

describe('upload sources from Node', () => {
  it('uploads a file from a path, a Readable and a web ReadableStream, in order', async () => {
    const path = join(dir, 'notes.txt');
    await writeFile(path, 'from disk');
    const server = await startServer((request, response) => { ok(response, { files: parts(request.body).map(([name]) => ({ fileKey: `of_${name}`, fileName: name })) }); });
    const sources = [
      await fromPath(path, { type: 'text/plain' }),
      await fromStream(Readable.from([Buffer.from('from '), Buffer.from('node')]), 'node.txt'),
      await fromStream(new ReadableStream<Uint8Array>({ start(c) { c.enqueue(new TextEncoder().encode('from web')); c.close(); } }), 'web.txt'),
    ];
    const uploaded = await clientFor(server.origin).files.upload(sources);
    expect(uploaded.map((f) => f.fileName)).toEqual(['notes.txt', 'node.txt', 'web.txt']);
    expect(parts(server.requests[0]!.body)).toEqual([['notes.txt', 'from disk'], ['node.txt', 'from node'], ['web.txt', 'from web']]);
  });

  it('names a path upload by option, and refuses a directory', async () => {
    const path = join(dir, 'a.bin');
    await writeFile(path, 'x');
    expect((await fromPath(path, { name: 'renamed.bin' })).name).toBe('renamed.bin');
    await expect(fromPath(dir)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('stops reading a stream past 50 MiB', async () => {
    const chunk = Buffer.alloc(1024 * 1024);
    let produced = 0;
    const endless = new Readable({ read() { produced += 1; this.push(chunk); } });
    await expect(fromStream(endless, 'big.bin')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', argument: 'stream' });
    expect(produced).toBeLessThan(60);
  });
});

describe('downloadToFile (service.md §4.6)', () => {
  it('writes the file to a path, sends no API key, and counts the bytes', async () => {
    const files = await startServer((_r, response) => { response.end('# Report'); });
    const target = join(dir, 'r.md');
    await expect(downloadToFile({ url: `${files.origin}/r.md` }, target)).resolves.toBe(8);
    expect(await readFile(target, 'utf8')).toBe('# Report');
    expect(files.requests[0]?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(files.requests[0]?.headers)).not.toContain(API_KEY);
  });

  it('leaves no partial file behind when the download fails, and keeps a file already there', async () => {
    // No Content-Length: the limit is found only while the body is written.
    const files = await startServer((_r, response) => {
      response.write('x'.repeat(600));
      response.end('y'.repeat(600));
    });
    const target = join(dir, 'big.bin');
    await expect(downloadToFile(`${files.origin}/big.bin`, target, { maxBytes: 1_000 })).rejects.toMatchObject({ code: 'DOWNLOAD_FAILED', reason: 'too-large' });
    expect(await readdir(dir)).toEqual([]);
    await writeFile(target, 'the earlier copy');
    await expect(downloadToFile(`${files.origin}/big.bin`, target, { maxBytes: 1_000 })).rejects.toMatchObject({ reason: 'too-large' });
    expect(await readdir(dir)).toEqual(['big.bin']);
    expect(await readFile(target, 'utf8')).toBe('the earlier copy');
  });

  it('writes to a stream', async () => {
    const files = await startServer((_r, response) => { response.end('abc'); });
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (c: Buffer) => chunks.push(c));
    await downloadToFile(`${files.origin}/x`, sink);
    expect(Buffer.concat(chunks).toString()).toBe('abc');
  });
});

describe('downloadToFile with bad arguments', () => {
  it('refuses a destination that is neither a path nor a writable stream before anything is fetched: no request, no timer left', async () => {
    const files = await startServer((_r, response) => { response.end('abc'); });
    const clock = createManualClock();
    for (const destination of [42, null, undefined, {}]) {
      await expect(downloadToFile(`${files.origin}/x`, destination as never, { scheduler: clockScheduler(clock) })).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'destination' });
    }
    expect(files.requests).toEqual([]);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('refuses a file that is neither a URL nor an output file with InvalidArgumentError', async () => {
    for (const file of [null, 42]) {
      await expect(downloadToFile(file as never, join(dir, 'x.txt'))).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'file' });
    }
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('spoolToDisk', () => {
  it('spools files whatever their names, inside its own directory, and keeps each name for the upload', async () => {
    const files = await startServer((_r, response) => { response.end('abc'); });
    const spool = await spoolToDisk({ directory: dir });
    try {
      const [spooled] = await readdir(dir);
      for (const name of ['', '.', '..', '../../up.md', 'a/b.md']) {
        const source = await spool.read({ name, type: 'text/markdown', url: `${files.origin}/x` }, { maxBytes: 100 });
        expect(source).toMatchObject({ name: name === '' ? 'file' : name });
        expect(await (source as { data: Blob }).data.text()).toBe('abc');
      }
      // Nothing was written beside the spool: only the spool's own directory is there.
      expect(await readdir(dir)).toEqual([spooled]);
    } finally {
      await spool.close();
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses null options with InvalidArgumentError, creating nothing', async () => {
    await expect(spoolToDisk(null as never)).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options' });
  });
});

describe('fromPath and fromStream with bad arguments', () => {
  it('refuses what is not a path, a stream, a name or options with InvalidArgumentError naming it, not a TypeError', async () => {
    const path = join(dir, 'a.txt');
    await writeFile(path, 'x');
    const cases: [() => Promise<unknown>, string][] = [
      [() => fromPath(null as never), 'path'],
      [() => fromPath(42 as never), 'path'],
      [() => fromPath(path, null as never), 'options'],
      [() => fromPath(path, { name: '' }), 'name'],
      [() => fromStream(null as never, 'a.txt'), 'stream'],
      [() => fromStream(Buffer.from('x') as never, 'a.txt'), 'stream'],
      [() => fromStream(Readable.from(['x']), undefined as never), 'name'],
      [() => fromStream(Readable.from(['x']), 'a.txt', null as never), 'options'],
    ];
    for (const [call, argument] of cases) await expect(call()).rejects.toMatchObject({ name: 'InvalidArgumentError', argument });
  });
});
