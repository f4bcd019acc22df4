import { downloadFile } from '../http/download.js';
import type { OutputFile, UploadedFile } from '../domain/model.js';
import { MAX_UPLOAD_BYTES, type UploadSource } from '../http/upload-source.js';
import type { PipelineClient } from './pipeline-client.js';

/**
 * Reads one output file into something `files.upload` accepts. `maxBytes` is the upload's limit
 * (50 MiB, service.md §2.3): a reader stops there, rather than fetch a file whole that cannot be uploaded.
 *
 * @example
 * ```ts
 * const read: OutputFileReader = async (file, { signal, maxBytes }) => ({ name: file.name, data: await downloadFile(file, { signal, maxBytes }) });
 * ```
 */
export type OutputFileReader = (file: OutputFile, options: { readonly signal?: AbortSignal; readonly maxBytes: number }) => Promise<UploadSource>;

/**
 * Options of {@link transferFiles}.
 *
 * @example
 * ```ts
 * await transferFiles(client, result.files, { signal: AbortSignal.timeout(60_000) });
 * ```
 */
export interface TransferOptions {
  readonly signal?: AbortSignal;
  /** The `fetch` for the public file URLs; the global one by default, never the client's authenticated one. */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * How a file is read before it is uploaded. Default: downloaded into a `Blob` (browser and Node).
   * In Node, `spoolToDisk()` of the node helpers streams it through a temporary file instead.
   */
  readonly read?: OutputFileReader;
}

/**
 * Hands output files of one run to the next as input: each is downloaded from its public URL —
 * without the API key (service.md §4.6) — and uploaded to the account, in batches of ten (§2.3). The
 * keys come back in the order of `files`; pass `fileKey` as a variable's value (§5.5: a string
 * starting with `of_`, or an array of them for a list of files).
 *
 * @example
 * ```ts
 * const [report] = await transferFiles(client, [outputFile(result, 'report.md')], { signal });
 * client.run('c-review', { variables: { document: report!.fileKey } });
 * ```
 */
export async function transferFiles(client: Pick<PipelineClient, 'files'>, files: readonly OutputFile[], options: TransferOptions = {}): Promise<UploadedFile[]> {
  const { signal } = options;
  const read: OutputFileReader =
    options.read ??
    (async (file, call) => ({
      name: file.name,
      data: await downloadFile(file, { ...(options.fetch === undefined ? {} : { fetch: options.fetch }), ...call }),
      ...(file.type === '' ? {} : { type: file.type }),
    }));
  const sources: UploadSource[] = [];
  // One at a time: a file can be large, and the upload needs each one whole (multipart, §2.3).
  for (const file of files) sources.push(await read(file, { maxBytes: MAX_UPLOAD_BYTES, ...(signal === undefined ? {} : { signal }) }));
  if (sources.length === 0) return [];
  return client.files.upload(sources, signal === undefined ? {} : { signal });
}
