import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { flowstreamFromSource } from './support/source-cli.js';

// `flowstream upload` of more files than one request carries (service.md §2.3: 10), as a user runs
// it: a child process from source against the emulator, which fails a later batch.

let emulator: Emulator;
let env: Record<string, string>;
let dir: string;
let paths: string[];

beforeAll(async () => {
  emulator = await createEmulator({ rateLimit: false });
  env = { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url };
  dir = await mkdtemp(join(tmpdir(), 'flowstream-upload-'));
  paths = [];
  for (let index = 0; index < 23; index += 1) {
    const path = join(dir, `f${String(index).padStart(2, '0')}.txt`);
    await writeFile(path, `file ${index}`);
    paths.push(path);
  }
});

afterAll(async () => {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});

describe('flowstream upload in batches', { timeout: 60_000 }, () => {
  it('prints the keys of the batches that uploaded before a later batch failed, then the error, and exits 3', async () => {
    // The second batch (files 11 to 20) is refused; the first is on the service.
    emulator.faults.add({ kind: 'status', status: 413, endpoint: 'upload', skip: 1, times: 1 });
    const cli = flowstreamFromSource(['upload', ...paths], env);
    expect(await cli.exited()).toBe(3);
    const lines = cli.stdout().trimEnd().split('\n');
    expect(lines.map((line) => line.split('  ')[1])).toEqual(paths.slice(0, 10).map((path) => path.split('/').at(-1)));
    const uploaded = emulator.requests.list({ endpoint: 'upload', status: 200 });
    expect(uploaded).toHaveLength(1);
    expect(lines.every((line) => /^of_\S+ {2}f\d\d\.txt$/u.test(line))).toBe(true);
    expect(cli.stderr()).toContain('Uploaded 10 of 23 files, then a batch failed');
  });

  it('with --json, prints those files as JSON lines', async () => {
    emulator.faults.add({ kind: 'status', status: 413, endpoint: 'upload', skip: 2, times: 1 });
    const cli = flowstreamFromSource(['upload', '--json', ...paths], env);
    expect(await cli.exited()).toBe(3);
    const files = cli.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as { fileKey: string; fileName: string });
    expect(files.map((file) => file.fileName)).toEqual(paths.slice(0, 20).map((path) => path.split('/').at(-1)));
    expect(files.every((file) => file.fileKey.startsWith('of_'))).toBe(true);
  });

  it('flowstream run --file says the files uploaded before a later batch failed, as --var to pass again, and starts nothing', async () => {
    emulator.faults.add({ kind: 'status', status: 413, endpoint: 'upload', skip: 1, times: 1 });
    const cli = flowstreamFromSource(['run', 'c-sample-linear', ...paths.map((path, index) => `--file=doc${index}=${path}`)], env);
    expect(await cli.exited()).toBe(3);
    const said = cli.stderr().split('\n').filter((line) => line.startsWith('  --var '));
    expect(said.map((line) => /^ {2}--var (doc\d+)=of_\S+ {2}\((.+)\)$/u.exec(line)?.slice(1))).toEqual(paths.slice(0, 10).map((path, index) => [`doc${index}`, path]));
    expect(cli.stderr()).toContain('Uploaded 10 of 23 files, then a batch failed');
    expect(emulator.requests.list({ endpoint: 'run' })).toHaveLength(0);
  });
});
