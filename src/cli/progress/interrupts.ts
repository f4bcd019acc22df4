import { EXIT_CODES } from '../exit-code.js';

/** Listens for one Ctrl-C; returns a function that stops listening. */
export type InterruptSource = (listener: () => void) => () => void;

const listeners = new Set<() => void>();
let interrupted = false;

/**
 * The one SIGINT handler of the process, installed at the first `processInterrupts` call and kept for
 * the process's life. Kept, not `once`: a library that hooks SIGINT to clean up and then re-raise the
 * signal when no one else listens (log-update, through signal-exit, on a terminal) would otherwise
 * find no other listener after the first Ctrl-C — and kill the process before the abort that Ctrl-C
 * sent has left. The order in which the handlers were added does not matter.
 */
function onSigint(): void {
  const current = [...listeners];
  listeners.clear();
  // A second Ctrl-C, or one that no command waits for, quits at once, as the default action would.
  if (interrupted || current.length === 0) process.exit(EXIT_CODES.interrupted);
  interrupted = true;
  for (const listener of current) listener();
}

/**
 * The process's SIGINT, once: the first Ctrl-C goes to the listeners while the process stays up to
 * finish what they start (an abort); a second one quits at once with exit code 130.
 */
export const processInterrupts: InterruptSource = (listener) => {
  if (!process.listeners('SIGINT').includes(onSigint)) process.on('SIGINT', onSigint);
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
};
