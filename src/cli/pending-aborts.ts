import { describeError } from './describe-error.js';
import { terminalText } from './format/terminal-text.js';

// What the library logs when it finally could not send the abort of an execution (through its
// retries and an outage): the log's `executionId` names it, its `error` says why.
export { ABORT_FAILED_LOG } from '../runs/run-lifecycle.js';

/** What the user reads when an execution may have been left running, and how to stop it later. */
function leftRunning(executionId: string): string {
  const id = terminalText(executionId);
  return `Execution ${id} may still be running, and spending credits. Abort it with: flowstream abort ${id}`;
}

/**
 * The aborts that a stop signal (Ctrl-C, SIGTERM, SIGHUP) asked for, until the process ends. The library
 * sends each in the background, after the command has returned, and keeps the process up until it is
 * answered; it logs the ones it finally could not send (`ABORT_FAILED_LOG`). Those are said on stderr
 * with how to abort the execution later, and make the exit code say that something was left running.
 */
export class PendingAborts {
  readonly #asked: (string | undefined)[] = [];
  readonly #failed = new Set<string>();
  readonly #write: (text: string) => void;
  readonly #onFailure: () => void;

  /** `write` says what went wrong (stderr); `onFailure` hears of each abort that could not be sent. */
  constructor(write: (text: string) => void, onFailure: () => void) {
    this.#write = write;
    this.#onFailure = onFailure;
  }

  /** A stop signal asked for the abort of `executionId`; undefined while the run's start had not answered. */
  ask(executionId: string | undefined): void {
    this.#asked.push(executionId);
  }

  /** The library could not send the abort of `executionId` to `baseUrl`, for `error`. */
  fail(executionId: string, error: unknown, baseUrl?: string): void {
    this.#failed.add(executionId);
    const [reason = 'Error: unknown'] = describeError(error, { executionId, ...(baseUrl === undefined ? {} : { baseUrl }) });
    this.#write(`Could not abort execution ${terminalText(executionId)}: ${reason.replace(/^Error: /u, '')}\n${leftRunning(executionId)}\n`);
    this.#onFailure();
  }

  /** Whether an abort could not be sent. */
  get failed(): boolean {
    return this.#failed.size > 0;
  }

  /**
   * The process stops waiting for the aborts asked for after `waitedMs`: says which may be unanswered,
   * and returns whether there were any.
   */
  giveUp(waitedMs: number): boolean {
    const unanswered = this.#asked.filter((executionId) => executionId === undefined || !this.#failed.has(executionId));
    const seconds = Math.round(waitedMs / 1_000);
    for (const executionId of unanswered) {
      this.#write(
        executionId === undefined
          ? `No answer after ${seconds} s to the start of the run that was to be aborted: an execution may have started, and still be running.\n`
          : `No answer after ${seconds} s to the abort of execution ${terminalText(executionId)}.\n${leftRunning(executionId)}\n`,
      );
    }
    return unanswered.length > 0;
  }
}
