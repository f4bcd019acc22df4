/** Listens for one Ctrl-C; returns a function that stops listening. */
export type InterruptSource = (listener: () => void) => () => void;

/**
 * The process's SIGINT, once: after the first Ctrl-C the default action is back, so a second one
 * quits at once while the abort is still being sent.
 */
export const processInterrupts: InterruptSource = (listener) => {
  process.once('SIGINT', listener);
  return () => {
    process.off('SIGINT', listener);
  };
};
