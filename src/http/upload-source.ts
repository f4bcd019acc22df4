import { InvalidArgumentError } from '../errors/validation-errors.js';

/**
 * service.md §2.3: the service refuses larger files with 413.
 *
 * @example
 * ```ts
 * file.size <= MAX_UPLOAD_BYTES;
 * ```
 */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/**
 * File contents with the name the service should record.
 *
 * @example
 * ```ts
 * await client.files.upload([{ name: 'data.csv', data: bytes, type: 'text/csv' }]);
 * ```
 */
export interface NamedFileData {
  readonly name: string;
  readonly data: Blob | Uint8Array | ArrayBuffer;
  /** MIME type; defaults to the Blob's own type. */
  readonly type?: string;
}

/**
 * A Blob with the name the service should record: a `File`, or any Blob given a `name` (a Blob without
 * one is refused at compile time, and with an `InvalidArgumentError` from JavaScript).
 */
export type NamedBlob = Blob & { readonly name: string };

/**
 * What `files.upload` accepts: a `File` (a Blob with a name) or named bytes. In Node, `fromPath()` and
 * `fromStream()` of `flowstream`'s node helpers produce these too.
 *
 * @example
 * ```ts
 * const sources: UploadSource[] = [new File(['a,b'], 'table.csv'), { name: 'notes.txt', data: new TextEncoder().encode('hi') }];
 * ```
 */
export type UploadSource = NamedBlob | NamedFileData;

/** A source ready for multipart: the part's bytes and its file name. */
export interface UploadPart {
  readonly name: string;
  readonly blob: Blob;
}

function toBlob(data: Blob | Uint8Array | ArrayBuffer, type: string | undefined): Blob {
  if (data instanceof Blob) return type === undefined || type === data.type ? data : new Blob([data], { type });
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data); // a copy that owns a plain ArrayBuffer
  return new Blob([bytes], type === undefined ? {} : { type });
}

function partOf(source: UploadSource, index: number): UploadPart {
  const argument = `files[${index}]`;
  if (source instanceof Blob) {
    const name = 'name' in source && typeof source.name === 'string' ? source.name : undefined;
    if (name === undefined || name === '') throw new InvalidArgumentError(argument, 'a Blob needs a name: pass a File or { name, data }');
    return { name, blob: source };
  }
  const given: unknown = source;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError(argument, 'must be a File, a named Blob or { name, data }');
  if (typeof source.name !== 'string' || source.name === '') throw new InvalidArgumentError(`${argument}.name`, 'must be a non-empty string');
  const isData = source.data instanceof Blob || source.data instanceof Uint8Array || source.data instanceof ArrayBuffer;
  if (!isData) throw new InvalidArgumentError(`${argument}.data`, 'must be a Blob, Uint8Array or ArrayBuffer');
  return { name: source.name, blob: toBlob(source.data, source.type) };
}

/**
 * Checks the sources before anything is sent — at least one file, each named, none over 50 MiB — and
 * turns them into multipart parts in input order.
 */
export function toUploadParts(sources: readonly UploadSource[]): UploadPart[] {
  if (!Array.isArray(sources)) throw new InvalidArgumentError('files', 'must be an array');
  if (sources.length === 0) throw new InvalidArgumentError('files', 'must contain at least one file');
  return (sources as readonly UploadSource[]).map((source, index) => {
    const part = partOf(source, index);
    if (part.blob.size > MAX_UPLOAD_BYTES) throw new InvalidArgumentError(`files[${index}]`, `"${part.name}" is ${part.blob.size} bytes, over the 50 MiB limit`);
    return part;
  });
}
