import { Command } from 'commander';
import type { ExecutionStatus } from '../../index.js';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { terminalText } from '../format/terminal-text.js';
import { outcomeAbout } from '../outcome.js';

interface AbortFlags {
  readonly json: boolean;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

const HELP = `
Stops an execution that is still running: one left running by \`flowstream run --no-abort\`, by a
detached or interrupted watch, or started elsewhere. Its unfinished nodes fail ("Workflow aborted by
user") and the execution ends \`failed\`. An execution that already ended is left as it is.

Examples:
  $ flowstream abort we-1a2b3c
  $ flowstream abort we-1a2b3c --json

Exit codes: 0 aborted or already ended, 2 usage error, 3 API or connection error (an unknown id too).`;

/** Whether an execution has ended: service.md §3.5, there is no `aborted` status, an aborted one reads `failed`. */
function hasEnded(status: ExecutionStatus): boolean {
  return status === 'finish' || status === 'failed';
}

async function abort(executionId: string, flags: AbortFlags, context: CliContext): Promise<CommandOutcome> {
  const client = connect(flags, context);
  const id = terminalText(executionId);
  // Read first: aborting an ended execution succeeds silently (service.md §3.5), which would say nothing of how it ended.
  const before = await client.executions.status(executionId);
  if (hasEnded(before.status)) {
    context.stdout.write(flags.json ? `${JSON.stringify({ executionId, aborted: false, status: before.status })}\n` : `Execution ${id} already ended: ${before.status}. Nothing to abort.\n`);
    return { kind: 'done' };
  }
  await client.executions.abort(executionId);
  // The status it ended with: an abort marks the execution `failed` (§3.5), unless it finished just before.
  const after = await client.executions.status(executionId);
  context.stdout.write(flags.json ? `${JSON.stringify({ executionId, aborted: true, status: after.status })}\n` : `Aborted execution ${id} (it was ${before.status}; now ${after.status}).\n`);
  return { kind: 'done' };
}

/** `flowstream abort <executionId>`: aborts an execution that is still running. */
export function abortCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('abort'))
    .description('abort an execution that is still running (its unfinished nodes fail)')
    .argument('<executionId>', 'the execution to abort (we-…)')
    .option('--json', 'print the outcome as one JSON object: { executionId, aborted, status }', false)
    .addHelpText('after', HELP)
    .action(async (executionId: string, flags: AbortFlags) => {
      report(await outcomeAbout(errorSubject(flags, context, { executionId }), () => abort(executionId, flags, context)));
    });
}
