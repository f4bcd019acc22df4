import type { InterruptSource } from './progress/interrupts.js';

/** What a command may touch of the outside world; `main` passes the process's own. */
export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly interrupts: InterruptSource;
}
