import { createHash } from 'node:crypto';

/** Spec §4.7: unused uploads are cleaned up after about 24 hours. */
export const UPLOAD_RETENTION_MS = 24 * 60 * 60 * 1_000;

export interface StoredUpload {
  readonly fileKey: string;
  readonly fileName: string;
  readonly type: string;
  readonly size: number;
  readonly expiresAt: number;
}

/** Uploaded files of one account, keyed by content. */
export class UploadStore {
  readonly #byKey = new Map<string, StoredUpload>();
  readonly #account: string;

  constructor(account: string) {
    this.#account = account;
  }

  /** service.md §5.6: the same bytes from the same account get the same key again, and a fresh expiry. */
  put(bytes: Uint8Array, fileName: string, type: string, now: number): StoredUpload {
    const digest = createHash('sha256').update(this.#account).update('\0').update(bytes).digest('base64url');
    // service.md §1.5: `of_` + 22 base64url characters.
    const fileKey = `of_${digest.slice(0, 22)}`;
    const upload = { fileKey, fileName, type, size: bytes.byteLength, expiresAt: now + UPLOAD_RETENTION_MS };
    this.#byKey.set(fileKey, upload);
    return upload;
  }

  /** The upload behind a key, unless unknown or expired. */
  find(fileKey: string, now: number): StoredUpload | undefined {
    const upload = this.#byKey.get(fileKey);
    return upload !== undefined && upload.expiresAt > now ? upload : undefined;
  }
}
