import { Command } from 'commander';
import { abortCommand } from './commands/abort.js';
import { budgetCommand } from './commands/budget.js';
import { emulatorCommand } from './commands/emulator.js';
import { generateCommand } from './commands/generate.js';
import { mcpCommand } from './commands/mcp.js';
import { runCommand } from './commands/run.js';
import { searchCommand } from './commands/search.js';
import { showCommand } from './commands/show.js';
import { typesCommand } from './commands/types.js';
import { uploadCommand } from './commands/upload.js';
import { watchCommand } from './commands/watch.js';
import type { CliContext } from './context.js';
import type { CommandOutcome } from './exit-code.js';
import { packageVersion } from './version.js';

const CONFIGURATION = `
Configuration:
  FLOWSTREAM_API_KEY   the API key (rf_…); --api-key overrides it
  FLOWSTREAM_BASE_URL  the API base URL, ending in /v1; --base-url overrides it
  NO_COLOR             no colours, even on a terminal

Try it locally: \`flowstream emulator\` prints a URL and a key for both.`;

/**
 * The `flowstream` command and its subcommands. Each action hands its outcome to `report`; commander
 * throws instead of exiting, so that one place turns every ending into an exit code.
 */
export function createProgram(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  const program = new Command('flowstream')
    .description('Run hosted workflows from the terminal and watch them live.')
    .version(packageVersion(), '-V, --version', 'print the version of flowstream')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', CONFIGURATION);
  for (const make of [runCommand, watchCommand, abortCommand, searchCommand, showCommand, uploadCommand, generateCommand, budgetCommand, emulatorCommand, typesCommand, mcpCommand]) {
    // Subcommands made on their own inherit nothing: they too must throw instead of exiting, and write to the context.
    program.addCommand(make(context, report).copyInheritedSettings(program));
  }
  return program;
}
