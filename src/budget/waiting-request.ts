import type { GateTicket } from '../domain/requests.js';

/** A request waiting for its turn: let go (`release`) or refused with an error. */
export interface Waiter {
  readonly ticket: GateTicket;
  readonly release: () => void;
  readonly refuse: (error: Error) => void;
}

/**
 * A request's wait for the budget as a Promise, for every account budget alike (in memory, in
 * Redis): `join` queues the waiter and returns how to take it out again; aborting `signal` takes it
 * out and rejects with the signal's reason; the abort listener goes as soon as the wait ends.
 */
export function waitForTurn(ticket: GateTicket, signal: AbortSignal | undefined, join: (waiter: Waiter) => () => void): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
  return new Promise<void>((resolve, reject) => {
    let leave = (): void => undefined;
    const onAbort = (): void => {
      leave();
      reject(signal?.reason as Error);
    };
    const settle = (): void => signal?.removeEventListener('abort', onAbort);
    signal?.addEventListener('abort', onAbort, { once: true });
    leave = join({
      ticket,
      release: () => {
        settle();
        resolve();
      },
      refuse: (error) => {
        settle();
        reject(error);
      },
    });
  });
}
