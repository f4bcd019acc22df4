import { describe, expect, it } from 'vitest';
import type { RunResult, UploadedFile } from '../../src/domain/model.js';
import { outputFields } from '../../src/pipeline/output-fields.js';
import { outputFile } from '../../src/pipeline/output-file.js';
import { outputText } from '../../src/pipeline/output-text.js';
import { transferFiles } from '../../src/pipeline/transfer-files.js';
import { fakeClient, resultOf } from './fake-client.js';

const message = (messageId: string, content: string, type: 'ai' | 'tool' = 'ai') => ({ messageId, type, rawType: type, content, reasoningContent: '' });

const result: RunResult = {
  ...resultOf('we-1'),
  output: [
    { nodeId: 'node-draft', status: 'finish', rawStatus: 'finish', messages: [message('am-1', 'first'), message('am-2', 'second')] },
    { nodeId: 'node-final', status: 'finish', rawStatus: 'finish', messages: [message('am-3', '{"title":"Tides","words":120,"draft":true}'), message('am-4', 'tool says', 'tool')] },
  ],
  files: [
    { name: 'b.png', type: 'image/png', url: 'http://files.example/b.png' },
    { name: 'a.md', type: 'text/markdown', url: 'http://files.example/a.md' },
  ],
};

describe('outputText', () => {
  it('reads the last AI message of the run, or every AI message of one node', () => {
    expect(outputText(result)).toBe('{"title":"Tides","words":120,"draft":true}');
    expect(outputText(result, { nodeId: 'node-draft' })).toBe('first\n\nsecond');
    expect(outputText(result, { nodeId: 'node-missing' })).toBe('');
    expect(outputText(resultOf('we-2'))).toBe('');
  });
});

describe('outputFields', () => {
  it('picks the chosen fields of a JSON answer, leaving out the missing ones', () => {
    expect(outputFields(result, ['title', 'words', 'author'])).toEqual({ title: 'Tides', words: 120 });
  });

  it('refuses an answer that is not a JSON object', () => {
    expect(() => outputFields(result, ['x'], { nodeId: 'node-draft' })).toThrow(/not JSON/);
    expect(() => outputFields({ ...result, output: [{ ...result.output[0]!, messages: [message('am-9', '[1]')] }] }, ['x'])).toThrow(/not a JSON object/);
  });
});

describe('outputFile', () => {
  it('finds a file by name or predicate, never by position (service.md §4.6)', () => {
    expect(outputFile(result, 'a.md').url).toBe('http://files.example/a.md');
    expect(outputFile(result, (name) => name.endsWith('.png')).name).toBe('b.png');
    expect(() => outputFile(result, 'c.csv')).toThrow(/no "c.csv" output file in execution we-1 \(it has b.png, a.md\)/);
  });
});

describe('transferFiles', () => {
  it('downloads each file without credentials and uploads them in order, with names and types', async () => {
    const seen: { url: string; init: RequestInit | undefined }[] = [];
    const fetcher: typeof fetch = (input, init) => {
      const url = input instanceof Request ? input.url : input.toString();
      seen.push({ url, init });
      return Promise.resolve(new Response(`bytes of ${url}`));
    };
    const uploads: (readonly string[])[] = [];
    const client = fakeClient({
      upload: (names) => {
        uploads.push(names);
        return Promise.resolve(names.map((name): UploadedFile => ({ fileKey: `of_${name}`, fileName: name })));
      },
    });
    const keys = await transferFiles(client, [outputFile(result, 'a.md'), outputFile(result, 'b.png')], { fetch: fetcher });
    expect(keys).toEqual([{ fileKey: 'of_a.md', fileName: 'a.md' }, { fileKey: 'of_b.png', fileName: 'b.png' }]);
    expect(uploads).toEqual([['a.md', 'b.png']]);
    expect(seen.map((request) => request.url)).toEqual(['http://files.example/a.md', 'http://files.example/b.png']);
    for (const request of seen) {
      expect(new Headers(request.init?.headers).has('authorization')).toBe(false);
      expect(request.init?.credentials).toBe('omit');
    }
  });

  it('uploads nothing for no files, and stops with the signal', async () => {
    const client = fakeClient({});
    await expect(transferFiles(client, [])).resolves.toEqual([]);
    const controller = new AbortController();
    const reason = new Error('stopped');
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => {
          reject(new Error('aborted'));
        });
      });
    const transfer = transferFiles(client, [outputFile(result, 'a.md')], { fetch: hanging, signal: controller.signal });
    controller.abort(reason);
    await expect(transfer).rejects.toBe(reason);
  });
});
