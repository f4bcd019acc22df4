import { Command } from 'commander';
import { isUploadIncompleteError, type UploadedFile } from '../../index.js';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { outcomeAbout } from '../outcome.js';
import { uploadSource } from '../upload-source.js';
import { terminalText } from '../format/terminal-text.js';

interface UploadFlags {
  readonly json: boolean;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

async function upload(paths: readonly string[], flags: UploadFlags, context: CliContext): Promise<CommandOutcome> {
  const client = connect(flags, context);
  const sources = await Promise.all(paths.map((path) => uploadSource(path, path)));
  const print = (files: readonly UploadedFile[]): void => {
    for (const file of files) context.stdout.write(flags.json ? `${JSON.stringify(file)}\n` : `${terminalText(file.fileKey)}  ${terminalText(file.fileName)}\n`);
  };
  try {
    print(await client.files.upload(sources));
  } catch (error) {
    // The batches sent before the failure are on the service: their keys are printed, not lost.
    if (isUploadIncompleteError(error)) print(error.uploaded);
    throw error;
  }
  return { kind: 'done' };
}

/** `flowstream upload <paths…>`: uploads files and prints their keys, to pass as variables. */
export function uploadCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('upload'))
    .description('upload files (at most 50 MiB each) and print their fileKeys')
    .argument('<paths...>', 'the files to upload')
    .option('--json', 'one JSON object per line', false)
    .addHelpText('after', '\nPass a key to a run with --var name=<fileKey>, or let `flowstream run --file name=path` upload for you.\nFiles go in batches of 10: when a later batch fails, the keys of the files already uploaded are\nprinted before the error (exit 3).')
    .action(async (paths: string[], flags: UploadFlags) => {
      report(await outcomeAbout(errorSubject(flags, context), () => upload(paths, flags, context)));
    });
}
