import { exitCodeOfSignal } from '../exit-code.js';

/**
 * The signals that tell the command to stop: Ctrl-C (SIGINT); `kill`, `timeout`, a cancelled CI job or
 * a stopped container (SIGTERM); a closed terminal window or a dropped SSH session (SIGHUP).
 */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** Listens for the first stop signal; returns a function that stops listening. */
export type InterruptSource = (listener: (signal: StopSignal) => void) => () => void;

const listeners = new Set<(signal: StopSignal) => void>();
let interrupted = false;

/**
 * The one handler of each stop signal of the process, installed at the first `processInterrupts` call
 * and kept for the process's life. Kept, not `once`: a library that hooks these signals to clean up and
 * then re-raise the signal when no one else listens (log-update, through signal-exit, on a terminal)
 * would otherwise find no other listener after the first signal — and kill the process before the
 * abort that the signal sent has left. The order in which the handlers were added does not matter.
 */
function onStopSignal(signal: StopSignal): void {
  const current = [...listeners];
  listeners.clear();
  // A second signal of any of the three, or one that no command waits for, quits at once, as the default action would.
  if (interrupted || current.length === 0) process.exit(exitCodeOfSignal(signal));
  interrupted = true;
  for (const listener of current) listener(signal);
}

const HANDLERS: Readonly<Record<StopSignal, () => void>> = {
  SIGINT: () => {
    onStopSignal('SIGINT');
  },
  SIGTERM: () => {
    onStopSignal('SIGTERM');
  },
  SIGHUP: () => {
    onStopSignal('SIGHUP');
  },
};

/**
 * The process's stop signals (SIGINT, SIGTERM, SIGHUP), once: the first goes to the listeners while the
 * process stays up to finish what they start (an abort); a second of any of them quits at once with
 * 128 + its number (130, 143, 129), as shells report it.
 */
export const processInterrupts: InterruptSource = (listener) => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = HANDLERS[signal];
    if (!process.listeners(signal).includes(handler)) process.on(signal, handler);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
};
