import { ResponseValidationError } from '../errors/validation-errors.js';
import { callOptions } from './call-options.js';
import type { CallOptions } from './calls.js';
import type { UploadedFile } from '../domain/model.js';
import { uploadedFilesSchema } from './schemas/workflow.js';
import type { Send } from './transport.js';
import { toUploadParts, type UploadSource } from './upload-source.js';

/**
 * service.md §2.3: at most 10 files per request (11+ → 400 `Unexpected field`).
 *
 * @example
 * ```ts
 * Math.ceil(23 / UPLOAD_BATCH_SIZE); // 3 requests for 23 files
 * ```
 */
export const UPLOAD_BATCH_SIZE = 10;

/**
 * The upload endpoint (spec §4.7).
 *
 * @example
 * ```ts
 * const [report] = await client.files.upload([new File([bytes], 'report.pdf')]);
 * await client.executions.start('c-1', { variables: { report: report!.fileKey } });
 * ```
 */
export interface FilesApi {
  /** Uploads any number of files, in batches of 10; the keys come back in input order. */
  upload(files: readonly UploadSource[], options?: CallOptions): Promise<UploadedFile[]>;
}

/** Builds the files resource; every key it receives is added to `uploadedKeys`. */
export function createFilesApi(send: Send, uploadedKeys: Set<string>): FilesApi {
  return {
    async upload(files: readonly UploadSource[], options?: CallOptions) {
      const parts = toUploadParts(files);
      const checked = callOptions(options);
      const results: UploadedFile[] = [];
      // Batches go one after another so the result order is the input order.
      for (let start = 0; start < parts.length; start += UPLOAD_BATCH_SIZE) {
        const batch = parts.slice(start, start + UPLOAD_BATCH_SIZE);
        const form = new FormData();
        for (const part of batch) form.append('files', part.blob, part.name); // field `files`, repeated (service.md §2.3)
        const uploaded = await send({ endpoint: 'upload', method: 'post', path: 'openapi/files/upload', body: form, schema: uploadedFilesSchema, ...checked });
        if (uploaded.length !== batch.length) {
          throw new ResponseValidationError({
            endpoint: 'upload',
            reason: 'schema',
            issues: [{ path: ['data', 'files'], message: `expected ${batch.length} files, got ${uploaded.length}` }],
          });
        }
        for (const file of uploaded) uploadedKeys.add(file.fileKey);
        results.push(...uploaded);
      }
      return results;
    },
  };
}
