/**
 * Several signals as one, aborting with the reason of whichever aborts first. Unlike
 * `AbortSignal.any`, the link is undone explicitly: Node 20 keeps every signal `any` made for as long
 * as its sources live, so a long-lived signal given to every call (a shutdown signal) would collect
 * one per request.
 */
export interface LinkedSignal {
  /** `undefined` when no signal was given; the one given, when only one was. */
  readonly signal: AbortSignal | undefined;
  /** Removes the listeners on the sources. Call it when the signal is no longer needed. */
  unlink(): void;
}

/** Links `signals` (the undefined ones left out) into one. */
export function linkSignals(signals: readonly (AbortSignal | undefined)[]): LinkedSignal {
  const sources = signals.filter((signal) => signal !== undefined);
  if (sources.length <= 1) return { signal: sources[0], unlink: () => undefined };
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, unlink: () => undefined };
  }
  const listeners = sources.map((source) => {
    const onAbort = (): void => {
      unlink();
      controller.abort(source.reason);
    };
    source.addEventListener('abort', onAbort, { once: true });
    return { source, onAbort };
  });
  const unlink = (): void => {
    for (const { source, onAbort } of listeners) source.removeEventListener('abort', onAbort);
  };
  return { signal: controller.signal, unlink };
}
