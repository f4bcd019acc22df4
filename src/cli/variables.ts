import { type Client, isUploadIncompleteError, type Variables, type VariableValue } from '../index.js';
import { terminalText } from './format/terminal-text.js';
import type { Assignment } from './assignments.js';
import { uploadSource } from './upload-source.js';
import { UsageError } from './usage-error.js';

function grouped(assignments: readonly Assignment[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { name, value } of assignments) groups.set(name, [...(groups.get(name) ?? []), value]);
  return groups;
}

/**
 * Uploads the `--file name=path` files and gives each name its fileKeys (a list: resource variables
 * take lists of fileKeys, service.md §5.5). An unreadable path or a file over 50 MiB is a usage error,
 * found before any upload. When a later batch fails, the files already on the service are said on
 * `note` (as `--var name=key`, to pass them again without uploading them again), then the error thrown.
 */
export async function uploadFileVariables(client: Client, files: readonly Assignment[], note: (line: string) => void): Promise<Variables> {
  if (files.length === 0) return {};
  const sources = await Promise.all(files.map(({ name, value }) => uploadSource(value, `--file ${name}=${value}`)));
  const uploaded = await client.files.upload(sources).catch((error: unknown) => {
    if (isUploadIncompleteError(error)) {
      note(`Uploaded before the failure (pass them with --var instead of --file):`);
      error.uploaded.forEach((file, index) => {
        const given = files[index];
        if (given !== undefined) note(`  --var ${terminalText(given.name)}=${terminalText(file.fileKey)}  (${terminalText(given.value)})`);
      });
    }
    throw error;
  });
  const keys = files.map(({ name, value }, index) => {
    const key = uploaded[index]?.fileKey;
    if (key === undefined) throw new Error(`The upload returned no key for ${value}`);
    return { name, value: key };
  });
  return Object.fromEntries([...grouped(keys)].map(([name, fileKeys]) => [name, fileKeys]));
}

/**
 * The run's variables from `--var name=value` (a name given twice becomes a list) and the uploaded
 * `--file` keys. A name used by both is a usage error.
 */
export function runVariables(vars: readonly Assignment[], files: Variables): Variables {
  const texts: [string, VariableValue][] = [...grouped(vars)].map(([name, values]) => [name, values.length === 1 ? (values[0] ?? '') : values]);
  const clash = texts.find(([name]) => name in files);
  if (clash !== undefined) throw new UsageError(`"${clash[0]}" is given both as --var and as --file`);
  return { ...Object.fromEntries(texts), ...files };
}
