import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { OutputFileReader } from '../pipeline/transfer-files.js';
import { downloadToFile } from './download-to-file.js';
import { fromPath } from './from-path.js';
import { objectArgument } from '../errors/validation-errors.js';

/**
 * A place on disk where output files pass on their way to the next step; see {@link spoolToDisk}.
 *
 * @example
 * ```ts
 * const spool: DiskSpool = await spoolToDisk({ directory: '/var/tmp' });
 * ```
 */
export interface DiskSpool {
  /** Streams a file to the spool and hands it to the upload, read lazily from disk. For `transferFiles({ read })`. */
  readonly read: OutputFileReader;
  /** Removes the spool and every file in it. Idempotent. */
  close(): Promise<void>;
}

/**
 * File transfer between steps without holding files in memory (Node): each output file is streamed
 * from its public URL — without the API key (service.md §4.6) — into a temporary directory, and the
 * upload reads it back from disk as it sends it (`fs.openAsBlob`). Files over 50 MiB are refused
 * before the upload (service.md §2.3). Close the spool once the upload is done.
 *
 * @example
 * ```ts
 * const spool = await spoolToDisk();
 * try {
 *   const [report] = await transferFiles(client, [outputFile(result, 'report.pdf')], { read: spool.read, signal });
 * } finally {
 *   await spool.close();
 * }
 * ```
 */
export async function spoolToDisk(options: { readonly directory?: string } = {}): Promise<DiskSpool> {
  const directory = await mkdtemp(join(objectArgument('options', options).directory ?? tmpdir(), 'flowstream-spool-'));
  let count = 0;
  const close = (): Promise<void> => rm(directory, { recursive: true, force: true });
  return {
    read: async (file, { signal, maxBytes }) => {
      count += 1;
      // A numbered sub-directory per file: two files may share a name, and the name must stay the file's own.
      const folder = join(directory, String(count));
      await mkdir(folder);
      const onDisk = nameOnDisk(file.name);
      const path = join(folder, onDisk);
      await downloadToFile(file, path, { maxBytes, ...(signal === undefined ? {} : { signal }) });
      return fromPath(path, { name: file.name === '' ? onDisk : file.name, ...(file.type === '' ? {} : { type: file.type }) });
    },
    close,
  };
}

/**
 * The name a file is spooled under: its base name, so that no name leaves its folder. A name with no
 * base of its own (`''`, `.`, `..`) would name the folder or its parent: it gets a plain one (the upload
 * keeps the file's own name, unless it is empty).
 */
function nameOnDisk(name: string): string {
  const base = basename(name);
  return base === '' || base === '.' || base === '..' ? 'file' : base;
}
