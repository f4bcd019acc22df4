import type { PendingAborts } from './pending-aborts.js';
import type { InterruptSource } from './progress/interrupts.js';

/** What a command may touch of the outside world; `main` passes the process's own. */
export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  /** Keys typed on a terminal (`flowstream budget` quits on `q`); absent, no keys are read. */
  readonly stdin?: NodeJS.ReadStream;
  readonly interrupts: InterruptSource;
  /** The aborts a stop signal asked for, which the process waits on after the command returned; absent, they are not followed. */
  readonly aborts?: PendingAborts;
}
