/** Node-only helpers: files from paths and streams, downloads to disk. */
export { fromPath } from './from-path.js';
export { fromStream } from './from-stream.js';
export { downloadToFile } from './download-to-file.js';
export { spoolToDisk, type DiskSpool } from './spool-to-disk.js';
