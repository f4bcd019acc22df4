import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { spoolToDisk } from '../../src/node/spool-to-disk.js';
import { type RunEvent, runResult } from '../../src/runs/events.js';
import { outputFields } from '../../src/pipeline/output-fields.js';
import { outputFile } from '../../src/pipeline/output-file.js';
import { outputText } from '../../src/pipeline/output-text.js';
import { thenRun } from '../../src/pipeline/then-run.js';
import { transferFiles } from '../../src/pipeline/transfer-files.js';
import { executionsOf, setup, task } from './harness.js';

const WORKFLOWS = [
  task('c-write', { durationMs: 2_000, messages: [{ content: 'Tides follow the moon.' }], files: [{ name: 'notes.md', type: 'text/markdown', content: '# Notes on tides' }] }),
  task('c-review', {
    durationMs: 2_000,
    messages: [{ content: '{"verdict":"approved","score":9,"comment":"clear"}' }],
    files: [{ name: 'review.txt', type: 'text/plain', content: 'Reviewed: fine' }],
  }),
  task('c-publish', { durationMs: 1_000, messages: [{ content: 'Published.' }] }),
];

describe('a chain of runs with thenRun', () => {
  it('passes text, chosen fields and files along three steps, files without the API key', async () => {
    const { emulator, client } = await setup(WORKFLOWS);
    const fileRequests: Headers[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      fileRequests.push(new Headers(init?.headers));
      return fetch(input, init);
    };
    const events = await lastValueFrom(
      client.run('c-write').pipe(
        thenRun(client, 'c-review', async (written, { signal }) => {
          const [notes] = await transferFiles(client, [outputFile(written, 'notes.md')], { signal, fetch: recordingFetch });
          return { variables: { text: outputText(written), document: notes!.fileKey } };
        }),
        thenRun(client, 'c-publish', async (reviewed, { signal }) => {
          const [review] = await transferFiles(client, [outputFile(reviewed, 'review.txt')], { signal, fetch: recordingFetch });
          return { variables: { ...outputFields(reviewed, ['verdict', 'score', 'missing']), review: review!.fileKey } };
        }),
        toArray(),
      ),
    );

    const finished = events.filter((event): event is Extract<RunEvent, { type: 'finished' }> => event.type === 'finished');
    expect(finished.map((event) => event.result.canvasId)).toEqual(['c-write', 'c-review', 'c-publish']);
    expect(events.at(-1)).toBe(finished[2]);

    const [review] = executionsOf(emulator, 'c-review');
    const [publish] = executionsOf(emulator, 'c-publish');
    expect(review?.variables).toEqual([
      { name: 'text', kind: 'text', value: 'Tides follow the moon.' },
      { name: 'document', kind: 'files', files: [{ fileKey: expect.stringMatching(/^of_/) as string, fileName: 'notes.md' }] },
    ]);
    expect(publish?.variables).toEqual([
      { name: 'verdict', kind: 'text', value: 'approved' },
      { name: 'score', kind: 'text', value: '9' },
      { name: 'review', kind: 'files', files: [{ fileKey: expect.stringMatching(/^of_/) as string, fileName: 'review.txt' }] },
    ]);
    // service.md §5.6: keys are content-addressed, so uploading the expected bytes gives the same keys.
    const [notesKey, reviewKey] = await client.files.upload([
      { name: 'notes.md', data: new TextEncoder().encode('# Notes on tides') },
      { name: 'review.txt', data: new TextEncoder().encode('Reviewed: fine') },
    ]);
    const documentVariable = review?.variables[1];
    const reviewVariable = publish?.variables[2];
    expect(documentVariable?.kind === 'files' ? documentVariable.files[0]?.fileKey : undefined).toBe(notesKey?.fileKey);
    expect(reviewVariable?.kind === 'files' ? reviewVariable.files[0]?.fileKey : undefined).toBe(reviewKey?.fileKey);
    // service.md §4.6: the public file URLs never get the API key.
    expect(emulator.requests.list({ endpoint: 'file' })).toHaveLength(2);
    expect(fileRequests).toHaveLength(2);
    for (const headers of fileRequests) expect(headers.has('authorization')).toBe(false);
    expect(emulator.requests.list({ endpoint: 'abort' })).toEqual([]);
  });

  it('does not start the next run when a link fails, and aborts the running link on unsubscribe', async () => {
    const { emulator, client } = await setup([...WORKFLOWS, task('c-broken', { durationMs: 1_000, failure: { kind: 'error', errors: ['boom'] } })]);
    await expect(runResult(client.run('c-broken').pipe(thenRun(client, 'c-publish', () => ({}))))).rejects.toMatchObject({ name: 'WorkflowFailedError' });
    expect(executionsOf(emulator, 'c-publish')).toEqual([]);

    const chain = client.run('c-write').pipe(thenRun(client, 'c-review', () => ({ variables: { text: 'x' } })));
    const subscription = chain.subscribe((event) => {
      if (event.type === 'started' && event.canvasId === 'c-review') subscription.unsubscribe();
    });
    await expect.poll(() => emulator.requests.list({ endpoint: 'abort' }).length).toBe(1);
    const [reviewRun] = executionsOf(emulator, 'c-review');
    expect(emulator.requests.list({ endpoint: 'abort' })[0]?.executionId).toBe(reviewRun?.executionId);
    expect(executionsOf(emulator, 'c-write')[0]?.status).toBe('finish');
  });
});

describe('file transfer in Node through a disk spool', () => {
  it('streams an output file to disk and uploads it from there, then removes it', async () => {
    const { emulator, client } = await setup([task('c-big', { durationMs: 1_000, files: [{ name: 'data.bin', type: 'application/octet-stream', size: 3 * 1024 * 1024 }] })], { rateLimit: false });
    const result = await runResult(client.run('c-big'));
    const directory = await mkdtemp(join(tmpdir(), 'pipeline-test-'));
    const spool = await spoolToDisk({ directory });
    const [viaDisk] = await transferFiles(client, [outputFile(result, 'data.bin')], { read: spool.read });
    expect(await readdir(directory)).toHaveLength(1);
    await spool.close();
    expect(await readdir(directory)).toEqual([]);
    // service.md §5.6: the same bytes through memory give the same content-addressed key.
    const [viaMemory] = await transferFiles(client, [outputFile(result, 'data.bin')]);
    expect(viaDisk?.fileKey).toMatch(/^of_/);
    expect(viaDisk?.fileKey).toBe(viaMemory?.fileKey);
    expect(emulator.requests.list({ endpoint: 'file' })).toHaveLength(2);
    await rm(directory, { recursive: true });
  });
});
