import type { RunResult } from '../../index.js';
import type { RunRenderer } from './renderer.js';

/**
 * One display per run for a stream of several runs in a row (a chain from `thenRun`): a `started`
 * opens a fresh display, a `finished` closes it with its result.
 */
export function perRunRenderer(open: () => RunRenderer): RunRenderer {
  let current: RunRenderer | undefined;
  const closeCurrent = (result: RunResult | undefined): void => {
    current?.close(result);
    current = undefined;
  };
  return {
    event: (event) => {
      if (event.type === 'started') closeCurrent(undefined);
      current ??= open();
      current.event(event);
      if (event.type === 'finished') closeCurrent(event.result);
    },
    close: () => {
      closeCurrent(undefined);
    },
  };
}
