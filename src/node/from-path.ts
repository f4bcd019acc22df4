import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { InvalidArgumentError, objectArgument, shownType } from '../errors/validation-errors.js';
import { fileName } from './file-name.js';
import { MAX_UPLOAD_BYTES, type NamedFileData } from '../http/upload-source.js';

/**
 * A file on disk as an upload source, read lazily by the upload itself (`fs.openAsBlob`), named after
 * its base name unless `name` is given. Files over 50 MiB are refused here already (service.md §2.3).
 *
 * @example
 * ```ts
 * const [report] = await client.files.upload([await fromPath('./report.pdf', { type: 'application/pdf' })]);
 * ```
 */
export async function fromPath(path: string, options: { readonly name?: string; readonly type?: string } = {}): Promise<NamedFileData> {
  const given: unknown = path;
  if (typeof given !== 'string' || given === '') throw new InvalidArgumentError('path', `must be a non-empty path (got ${given === '' ? 'an empty string' : shownType(given)})`);
  objectArgument('options', options);
  if (options.name !== undefined) fileName('name', options.name);
  const info = await stat(path);
  if (!info.isFile()) throw new InvalidArgumentError('path', `${path} is not a file`);
  if (info.size > MAX_UPLOAD_BYTES) throw new InvalidArgumentError('path', `${path} is ${info.size} bytes, over the 50 MiB limit`);
  const data = await openAsBlob(path, options.type === undefined ? {} : { type: options.type });
  return { name: options.name ?? basename(path), data, ...(options.type === undefined ? {} : { type: options.type }) };
}
