import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { InvalidArgumentError, objectArgument, shownType } from '../errors/validation-errors.js';
import { fileName } from './file-name.js';
import { MAX_UPLOAD_BYTES, type NamedFileData } from '../http/upload-source.js';

/**
 * Reads a Node `Readable` or a web `ReadableStream` into an upload source. The multipart upload needs
 * the whole size up front, so the stream is buffered — and stopped as soon as it passes 50 MiB
 * (service.md §2.3), before memory grows further.
 *
 * @example
 * ```ts
 * const source = await fromStream(createReadStream('./data.csv'), 'data.csv', { type: 'text/csv' });
 * await client.files.upload([source]);
 * ```
 */
export async function fromStream(
  stream: Readable | ReadableStream<Uint8Array>,
  name: string,
  options: { readonly type?: string } = {},
): Promise<NamedFileData> {
  fileName('name', name);
  objectArgument('options', options);
  const given: unknown = stream;
  if (!(given instanceof Readable || given instanceof ReadableStream)) throw new InvalidArgumentError('stream', `must be a Node Readable or a web ReadableStream (got ${shownType(given)})`);
  const readable = stream instanceof Readable ? stream : Readable.fromWeb(stream as NodeReadableStream<Uint8Array>);
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  for await (const chunk of readable) {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : new Uint8Array(chunk as Uint8Array); // a copy on its own ArrayBuffer
    size += bytes.byteLength;
    if (size > MAX_UPLOAD_BYTES) {
      readable.destroy();
      throw new InvalidArgumentError('stream', `"${name}" is over the 50 MiB limit`);
    }
    chunks.push(bytes);
  }
  const data = new Blob(chunks, options.type === undefined ? {} : { type: options.type });
  return { name, data, ...(options.type === undefined ? {} : { type: options.type }) };
}
