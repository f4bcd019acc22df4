import { Command, Option } from 'commander';
import { createEmulator, type Emulator, type Profile } from '../../emulator/index.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { portNumber, positiveNumber } from '../numbers.js';
import { UsageError } from '../usage-error.js';

interface EmulatorFlags {
  readonly port: number;
  readonly speed: number;
  readonly profile: Profile;
}

const PROFILES: readonly Profile[] = ['service', 'spec'];

function banner(emulator: Emulator, flags: EmulatorFlags): string {
  const width = Math.max(...emulator.workflows.list().map(({ workflow }) => workflow.canvasId.length));
  return [
    `flowstream emulator listening on ${emulator.url} (profile ${flags.profile}, time ${flags.speed}x)`,
    `API key: ${emulator.apiKey}`,
    '',
    'Point the command at it:',
    `  export FLOWSTREAM_BASE_URL=${emulator.url}`,
    `  export FLOWSTREAM_API_KEY=${emulator.apiKey}`,
    '  flowstream run c-sample-parallel',
    '',
    'Sample workflows:',
    ...emulator.workflows.list().map(({ workflow }) => `  ${workflow.canvasId.padEnd(width)}  ${workflow.title}`),
    '',
    'Press Ctrl-C to stop.',
  ].join('\n');
}

/** The port of `--port` taken or not allowed to this user: the command line to change, not a failure of the emulator. */
function portRefusal(error: unknown, port: number): UsageError | undefined {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  if (code === 'EADDRINUSE') return new UsageError(`port ${port} on 127.0.0.1 is in use: choose another with --port, or --port 0 for any free one.`);
  if (code === 'EACCES') return new UsageError(`port ${port} on 127.0.0.1 is not allowed to this user: choose one above 1023 with --port, or --port 0 for any free one.`);
  return undefined;
}

async function serve(flags: EmulatorFlags, context: CliContext): Promise<CommandOutcome> {
  // A local development server: a page under development, served from anywhere, may call it.
  const emulator = await createEmulator({ port: flags.port, speed: flags.speed, profile: flags.profile, cors: { origins: '*' } }).catch((error: unknown) => {
    throw portRefusal(error, flags.port) ?? error;
  });
  // Listening before the banner: whoever reads it may press Ctrl-C at once. SIGTERM and SIGHUP (a
  // closed terminal) stop it as cleanly.
  const stopped = new Promise<void>((resolve) => {
    context.interrupts(() => {
      resolve();
    });
  });
  context.stdout.write(`${banner(emulator, flags)}\n`);
  await stopped;
  await emulator.close();
  context.stdout.write('Emulator stopped.\n');
  return { kind: 'done' };
}

/** `flowstream emulator`: the local Workflow API in the foreground, with its sample workflows. */
export function emulatorCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return new Command('emulator')
    .description('run the local Workflow API emulator with its sample workflows until Ctrl-C')
    .option('--port <port>', 'port on 127.0.0.1 (0: any free port)', portNumber, 0)
    .option('--speed <factor>', 'time acceleration: 10 makes a 10 s node take 1 s', positiveNumber, 1)
    .addOption(new Option('--profile <profile>', "behave as the service does or as the spec reads").choices(PROFILES).default('service'))
    .action(async (flags: EmulatorFlags) => {
      report(await serve(flags, context));
    });
}
