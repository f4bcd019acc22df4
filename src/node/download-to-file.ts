import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { DownloadError } from '../errors/download-error.js';
import { InvalidArgumentError, shownType } from '../errors/validation-errors.js';
import { openFile, type DownloadOptions } from '../http/download.js';
import type { OutputFile } from '../domain/model.js';

/**
 * Streams an output file to a path or a writable stream, without holding it in memory and without
 * the API key (service.md §4.6: output URLs are public). Resolves with the number of bytes written.
 * A path is written whole or not at all: a download that fails leaves no partial file there, and a file
 * already at the path is replaced only once the new one is complete.
 *
 * @example
 * ```ts
 * for (const file of result.files) await downloadToFile(file, `./out/${file.name}`);
 * ```
 */
export async function downloadToFile(file: Pick<OutputFile, 'url'> | string, destination: string | Writable, options: DownloadOptions = {}): Promise<number> {
  // Checked before the download opens: a destination refused by `pipeline` would leave its response and deadline open.
  checkDestination(destination);
  const response = await openFile(file, options);
  const body = response.body;
  if (body === null) throw new DownloadError({ url: typeof file === 'string' ? file : (file.url ?? '') });
  let written = 0;
  const source = Readable.fromWeb(body as NodeReadableStream<Uint8Array>);
  source.on('data', (chunk: Uint8Array) => {
    written += chunk.byteLength;
  });
  const piped = { ...(options.signal === undefined ? {} : { signal: options.signal }) };
  if (typeof destination !== 'string') {
    await pipeline(source, destination, piped);
    return written;
  }
  // Written beside the destination, then renamed: a download that fails half-way (too large, its
  // deadline, the signal, a dropped connection) leaves no partial file under the name, nor replaces one there.
  const partial = `${destination}.${randomUUID()}.part`;
  try {
    await pipeline(source, createWriteStream(partial), piped);
    await rename(partial, destination);
  } catch (error: unknown) {
    await rm(partial, { force: true });
    throw error;
  }
  return written;
}

/** A path, or a stream to write to (a Node `Writable`, or a web `WritableStream`); anything else is an `InvalidArgumentError`. */
function checkDestination(destination: unknown): void {
  if (typeof destination === 'string') {
    if (destination === '') throw new InvalidArgumentError('destination', 'must not be an empty path');
    return;
  }
  const writable = typeof destination === 'object' && destination !== null && (typeof Reflect.get(destination, 'write') === 'function' || destination instanceof WritableStream);
  if (!writable) throw new InvalidArgumentError('destination', `must be a path or a writable stream (got ${shownType(destination)})`);
}
