import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, without a flag on the test runner: V8 hands out `gc` to a new context.
 * Collected twice, the loop turning in between: WeakRef targets live until the current job ends, and
 * pending microtasks and finalizers release what they hold.
 */
export function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return new Promise<void>((resolve) => {
    gc();
    setImmediate(() => {
      gc();
      resolve();
    });
  });
}
