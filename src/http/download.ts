import { DownloadError } from '../errors/download-error.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import type { OutputFile } from './model.js';

/**
 * How to fetch an output file.
 *
 * @example
 * ```ts
 * await downloadFile(file, { signal: AbortSignal.timeout(30_000) });
 * ```
 */
export interface DownloadOptions {
  /** The `fetch` to use; the global one by default. It is never the client's authenticated instance. */
  readonly fetch?: typeof globalThis.fetch;
  readonly signal?: AbortSignal;
}

function urlOf(file: Pick<OutputFile, 'url'> | string): string {
  const url = typeof file === 'string' ? file : file.url;
  if (url === undefined || url === '') throw new InvalidArgumentError('file.url', 'is missing: files appear with a URL only once their node finished (PROTOCOL §4.6)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError('file.url', `is not an absolute URL (got "${url}")`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidArgumentError('file.url', `must use http or https (got ${parsed.protocol})`);
  return url;
}

/**
 * Opens an output file's public URL. Output URLs need no Authorization (PROTOCOL §4.6) and may live on
 * another host, so this goes through a plain `fetch` that knows no API key, without cookies or referrer.
 *
 * @example
 * ```ts
 * const response = await openFile(result.files[0]!);
 * ```
 */
export async function openFile(file: Pick<OutputFile, 'url'> | string, options: DownloadOptions = {}): Promise<Response> {
  const url = urlOf(file);
  const fetcher = options.fetch ?? globalThis.fetch;
  let response: Response;
  try {
    response = await fetcher(url, {
      method: 'GET',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason as Error;
    throw new DownloadError({ url, cause: error });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new DownloadError({ url, status: response.status });
  }
  return response;
}

/**
 * Downloads an output file into a `Blob` (browser-safe; Node users writing to disk see
 * `downloadToFile` in the node helpers).
 *
 * @example
 * ```ts
 * const blob = await downloadFile(result.files[0]!, { signal });
 * const text = await blob.text();
 * ```
 */
export async function downloadFile(file: Pick<OutputFile, 'url'> | string, options: DownloadOptions = {}): Promise<Blob> {
  const response = await openFile(file, options);
  try {
    return await response.blob();
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason as Error;
    throw new DownloadError({ url: urlOf(file), cause: error });
  }
}
