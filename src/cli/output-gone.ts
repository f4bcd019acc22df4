import { isatty } from 'node:tty';

const STDIO = [0, 1, 2] as const;

/**
 * Output that cannot be written any more: a reader that went away (`flowstream run … --json | head`)
 * or a terminal that was closed (SIGHUP, then every write fails).
 */
const GONE_OUTPUT = new Set(['EPIPE', 'EIO']);

/**
 * Keeps the process going when its output is gone: the abort that a closed terminal asked for must
 * still be sent and answered, and the run's end still decides the exit code. Any other failure to
 * write still ends the process.
 */
export function ignoreGoneOutput(streams: readonly NodeJS.WriteStream[]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === undefined || !GONE_OUTPUT.has(error.code)) throw error;
    });
  }
}

/**
 * Ends a process whose terminal hung up (its window closed, its SSH session dropped) by SIGHUP's own
 * default action, as the signal would have without a handler. Exiting normally instead, Node (20, at
 * least) restores the terminal's settings of its start on the way out, and aborts with an assertion
 * failure and a core dump when that fails, as it does on a terminal that is gone. Install it at start:
 * it remembers which of stdin, stdout and stderr were a terminal, and at exit, if one no longer is (a
 * hung-up terminal answers as none), the process dies of SIGHUP (exit status 129 to a shell) instead.
 */
export function dieOfHangUpAtExit(): void {
  const terminals = STDIO.filter((fd) => isatty(fd));
  if (terminals.length === 0) return;
  process.once('exit', () => {
    if (terminals.every((fd) => isatty(fd))) return;
    // With no listener left, SIGHUP takes its default action: the process ends at once, before Node's own exit.
    process.removeAllListeners('SIGHUP');
    process.kill(process.pid, 'SIGHUP');
  });
}
