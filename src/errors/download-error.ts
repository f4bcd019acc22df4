import { brand, FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * An output file could not be fetched from its public URL (PROTOCOL §4.6): the file server answered
 * with an error status (`status`), or the connection failed (`status` undefined, `cause` set).
 *
 * @example
 * ```ts
 * const blob = await downloadFile(file).catch((e) => (isDownloadError(e) && e.status === 404 ? undefined : Promise.reject(e)));
 * ```
 */
export class DownloadError extends FlowstreamError {
  readonly url: string;
  readonly status?: number;

  constructor(details: { readonly url: string; readonly status?: number; readonly cause?: unknown }) {
    super(
      `Download of ${details.url} failed${details.status === undefined ? '' : ` with HTTP ${details.status}`}`,
      'DOWNLOAD_FAILED',
      details.cause === undefined ? {} : { cause: details.cause },
    );
    this.url = details.url;
    if (details.status !== undefined) this.status = details.status;
    brand(this, 'DownloadError');
  }
}

/**
 * True for a {@link DownloadError} from any realm.
 *
 * @example
 * ```ts
 * if (isDownloadError(error)) console.log(error.url, error.status);
 * ```
 */
export const isDownloadError = guardFor<DownloadError>('DownloadError');
