import type { ErrorSubject } from './describe-error.js';
import type { CommandOutcome } from './exit-code.js';
import type { RunEnding } from './progress/follow-run.js';

/** How following a run ended, as a command outcome: a failed workflow is exit 1, Ctrl-C 130, SIGTERM 143, SIGHUP 129. */
export function outcomeOfRun(ending: RunEnding): CommandOutcome {
  switch (ending.kind) {
    case 'finished':
      return ending.result.status === 'finish' ? { kind: 'done' } : { kind: 'workflow-failed' };
    case 'interrupted':
      return { kind: 'interrupted', signal: ending.signal };
    case 'error':
      return { kind: 'error', error: ending.error };
    default:
      return ending satisfies never;
  }
}

/**
 * Runs a command and marks a failure, thrown or returned, with what the command was about, so that
 * its description names the workflow, the execution or the base URL the user gave.
 */
export async function outcomeAbout(about: ErrorSubject, command: () => Promise<CommandOutcome>): Promise<CommandOutcome> {
  try {
    const outcome = await command();
    // What the command knew of its failure (which workflow of several) is kept beside what it was asked about.
    return outcome.kind === 'error' ? { ...outcome, about: { ...about, ...outcome.about } } : outcome;
  } catch (error) {
    return { kind: 'error', error, about };
  }
}
