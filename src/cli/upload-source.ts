import { stat } from 'node:fs/promises';
import { MAX_UPLOAD_BYTES, type NamedFileData } from '../index.js';
import { fromPath } from '../node/index.js';
import { UsageError } from './usage-error.js';

/**
 * A file the user named for upload, checked before anything is sent: it must be a readable file of at
 * most 50 MiB (service.md §2.3). `label` is how the user named it (`--file attachment=./notes.md`), for
 * the usage error that says what is wrong.
 */
export async function uploadSource(path: string, label: string): Promise<NamedFileData> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new UsageError(`Cannot upload ${label}: it is not a file.`);
    if (info.size > MAX_UPLOAD_BYTES) {
      throw new UsageError(`Cannot upload ${label}: the file is ${info.size.toLocaleString('en-US')} bytes, over the service's limit of 50 MiB (${MAX_UPLOAD_BYTES.toLocaleString('en-US')} bytes) per file. Nothing was uploaded.`);
    }
    return await fromPath(path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Cannot read ${label}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
