import type { AppContext } from '../app/context.js';
import type { Reply } from '../app/reply.js';
import { frameworkError, success } from '../app/reply.js';

/** service.md §2.3: at most 10 files per request. */
export const MAX_FILES_PER_UPLOAD = 10;
/** service.md §2.3: at most 50 MiB per file. */
export const MAX_UPLOAD_FILE_BYTES = 50 * 1024 * 1024;
/** Room for multipart boundaries and part headers around the largest acceptable body. */
const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

/** `POST /openapi/files/upload` — multipart, field `files` (service.md §2.3, §5.6). */
export async function handleUpload(context: AppContext, request: Request): Promise<Reply> {
  if (!/^multipart\/form-data/i.test(request.headers.get('content-type') ?? '')) return frameworkError(400, 'No files provided');
  // A body larger than ten files at the limit must hold a file over it: refuse before buffering.
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > MAX_FILES_PER_UPLOAD * MAX_UPLOAD_FILE_BYTES + MULTIPART_OVERHEAD_BYTES) return frameworkError(413, 'File too large');
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return frameworkError(400, 'Malformed multipart body');
  }
  const files: File[] = [];
  // Checked in order of the parts, as the service's multipart reader meets them.
  for (const [field, value] of form) {
    if (typeof value === 'string') continue;
    if (field !== 'files' || files.length === MAX_FILES_PER_UPLOAD) return frameworkError(400, 'Unexpected field');
    if (value.size > MAX_UPLOAD_FILE_BYTES) return frameworkError(413, 'File too large');
    files.push(value);
  }
  if (files.length === 0) return frameworkError(400, 'No files provided');
  const now = context.clock.now();
  const uploaded = [];
  for (const file of files) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const stored = context.uploads.put(bytes, file.name, file.type === '' ? 'application/octet-stream' : file.type, now);
    uploaded.push({ fileKey: stored.fileKey, fileName: stored.fileName });
  }
  return success({ files: uploaded });
}
