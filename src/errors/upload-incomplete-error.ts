import type { UploadedFile } from '../domain/model.js';
import { FlowstreamError, guardFor } from './flowstream-error.js';

/**
 * `client.files.upload` of more than 10 files (sent in batches of 10) failed after some batches were
 * uploaded: those files are on the service, and `uploaded` has their keys (in input order, the first
 * `uploaded.length` files given), so that they are not lost. `cause` is the failure of the batch that
 * failed; the files after it were not sent. When the first batch fails, nothing was uploaded and the
 * upload rejects with that failure itself.
 *
 * @example
 * ```ts
 * try {
 *   await client.files.upload(files);
 * } catch (error) {
 *   if (isUploadIncompleteError(error)) await retryFrom(files.slice(error.uploaded.length), error.uploaded);
 * }
 * ```
 */
export class UploadIncompleteError extends FlowstreamError {
  static override readonly kind: string = 'UploadIncompleteError';

  /** The files that were uploaded before the failure, in input order. */
  readonly uploaded: readonly UploadedFile[];
  /** How many files the upload was given. */
  readonly total: number;

  constructor(uploaded: readonly UploadedFile[], total: number, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Uploaded ${uploaded.length} of ${total} files, then a batch failed: ${reason}`, 'UPLOAD_INCOMPLETE', { cause });
    this.uploaded = uploaded;
    this.total = total;
  }
}

/**
 * True for an {@link UploadIncompleteError} from any realm.
 *
 * @example
 * ```ts
 * if (isUploadIncompleteError(error)) console.log(error.uploaded.map((file) => file.fileKey));
 * ```
 */
export const isUploadIncompleteError = /* @__PURE__ */ guardFor(UploadIncompleteError);
