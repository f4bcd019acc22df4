import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * An output file could not be fetched from its public URL (service.md §4.6): the file server answered
 * with an error status (`status`), or the connection failed (`status` undefined, `cause` set).
 *
 * @example
 * ```ts
 * const blob = await downloadFile(file).catch((e) => (isDownloadError(e) && e.status === 404 ? undefined : Promise.reject(e)));
 * ```
 */
export class DownloadError extends FlowstreamError {
  static override readonly kind: string = 'DownloadError';

  readonly url: string;
  readonly status?: number;
  /** Why it stopped when no HTTP status says: the file passed `maxBytes`, or the download its `timeoutMs`. */
  readonly reason?: 'too-large' | 'timeout';
  /** The limit the file passed, with `reason: 'too-large'`. */
  readonly maxBytes?: number;

  constructor(details: {
    readonly url: string;
    readonly status?: number;
    readonly cause?: unknown;
    readonly reason?: 'too-large' | 'timeout';
    readonly maxBytes?: number;
    readonly timeoutMs?: number;
  }) {
    const why =
      details.reason === 'too-large'
        ? `: the file is larger than ${String(details.maxBytes)} bytes (maxBytes)`
        : details.reason === 'timeout'
          ? ` after ${String(details.timeoutMs)} ms (timeoutMs)`
          : details.status === undefined
            ? ''
            : ` with HTTP ${details.status}`;
    super(`Download of ${details.url} failed${why}`, 'DOWNLOAD_FAILED', { cause: details.cause });
    this.url = details.url;
    if (details.status !== undefined) this.status = details.status;
    if (details.reason !== undefined) this.reason = details.reason;
    if (details.maxBytes !== undefined) this.maxBytes = details.maxBytes;
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
export const isDownloadError = /* @__PURE__ */ guardFor(DownloadError);
