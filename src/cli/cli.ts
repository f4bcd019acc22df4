import type { CliContext } from './context.js';
import { describeError } from './describe-error.js';
import { type CommandOutcome, exitCodeFor, isCommanderError } from './exit-code.js';
import { createProgram } from './program.js';

/**
 * Runs `flowstream` with the arguments after the program name and returns the exit code. Errors are
 * reported on stderr here, once, whatever command they come from (commander prints its own).
 */
export async function runCli(args: readonly string[], context: CliContext): Promise<number> {
  const last: { outcome: CommandOutcome } = { outcome: { kind: 'done' } };
  try {
    await createProgram(context, (outcome) => {
      last.outcome = outcome;
    }).parseAsync([...args], { from: 'user' });
  } catch (error) {
    last.outcome = { kind: 'error', error };
  }
  const { outcome } = last;
  if (outcome.kind === 'error' && !isCommanderError(outcome.error)) context.stderr.write(`${describeError(outcome.error, outcome.about).join('\n')}\n`);
  return exitCodeFor(outcome);
}
