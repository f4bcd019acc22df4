import type { OutputFile } from '../../index.js';
import type { Paint } from './paint.js';

/** A byte count as people read it: `512 B`, `2.0 KiB`, `3.4 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The output files of a run, one line each with type, size and public URL (service.md §4.6). */
export function fileLines(files: readonly OutputFile[], paint: Paint): readonly string[] {
  if (files.length === 0) return [];
  return [
    'Files:',
    ...files.map((file) => {
      const details = [file.type, ...(file.size === undefined ? [] : [formatBytes(file.size)])].join(', ');
      return `  ${paint.bold(file.name)}  ${paint.dim(`(${details})`)}  ${file.url ?? paint.dim('no URL')}`;
    }),
  ];
}
