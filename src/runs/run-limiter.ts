import { defer, Observable, type Subscription } from 'rxjs';
import { ConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { abortSignalArgument, InvalidArgumentError, objectArgument } from '../errors/validation-errors.js';

/*
 * Limits on how many runs are active at once per key (a user, a tenant, a chat): `createRunLimiter`,
 * its slots and its queue. It knows nothing of runs but that they are Observables.
 */

/**
 * Options of {@link createRunLimiter}.
 *
 * @example
 * ```ts
 * const options: RunLimiterOptions = { perKey: 5, mode: 'reject' };
 * ```
 */
export interface RunLimiterOptions {
  /** Runs active at once per key (an integer ≥ 1). */
  readonly perKey: number;
  /** `queue` (default): a run beyond the limit waits for a slot. `reject`: it errors at once with `ConcurrencyLimitError`. */
  readonly mode?: 'queue' | 'reject';
}

/**
 * Options of {@link RunLimiter.acquire}.
 *
 * @example
 * ```ts
 * const options: AcquireOptions = { signal: AbortSignal.timeout(60_000) };
 * ```
 */
export interface AcquireOptions {
  /** Gives up waiting for a slot: the promise rejects with the signal's reason and no slot is taken. */
  readonly signal?: AbortSignal;
}

/**
 * Limits how many runs are active at once per key (a user, a tenant, a chat). A slot is taken when
 * the run is subscribed and given back when it completes, errors or is unsubscribed; queued runs
 * start in the order they came. For work that is not one Observable (a run handle, a copilot call,
 * an upload and then a start), `acquire` and `tryAcquire` hold a slot until their release is called.
 *
 * @example
 * ```ts
 * const perUser = createRunLimiter({ perKey: 5, mode: 'queue' });
 * perUser.run(userId, () => client.run('c-1', { variables })).pipe(toRunState()).subscribe(updateCard);
 * ```
 */
export interface RunLimiter {
  /**
   * `run()`'s Observable, in a slot of `key`: subscribed when a slot is free. In `queue` mode it waits
   * for one (unsubscribing while waiting leaves the queue, and nothing is started); in `reject` mode it
   * errors at once with `ConcurrencyLimitError`.
   */
  run<T>(key: string, run: () => Observable<T>): Observable<T>;
  /**
   * Takes a slot of `key` and resolves with the function that gives it back (calling it again does
   * nothing). In `queue` mode it waits for a slot, in the same line as `run()`; in `reject` mode it
   * rejects at once with `ConcurrencyLimitError` when none is free. `signal` gives up the wait: the
   * promise rejects with its reason (an `AbortError` when the reason is no `Error`) and nothing is held.
   *
   * @example
   * ```ts
   * const release = await perUser.acquire(userId, { signal: request.signal });
   * try {
   *   const { canvasId } = await client.copilot.generate({ query });
   *   const run = client.startRun(canvasId);
   *   await run.result;
   * } finally {
   *   release();
   * }
   * ```
   */
  acquire(key: string, options?: AcquireOptions): Promise<() => void>;
  /**
   * Takes a slot of `key` if one is free now (and nobody waits for it): the function that gives it
   * back (calling it again does nothing), or `undefined`, whatever the mode.
   *
   * @example
   * ```ts
   * const release = perUser.tryAcquire(userId);
   * if (release === undefined) return reply('You already have runs going.');
   * client.startRun('c-1').result.finally(release);
   * ```
   */
  tryAcquire(key: string): (() => void) | undefined;
  /** The slots of `key` taken now (runs and acquired slots). */
  active(key: string): number;
  /** The runs and `acquire` calls of `key` waiting for a slot (always 0 in `reject` mode). */
  queued(key: string): number;
}

/** One claim on a slot of a key: waiting for it, holding it, or done with it. */
interface Claim {
  readonly lane: Lane;
  state: 'waiting' | 'granted' | 'released';
  /** Told, once, that the slot is its own; run from the limiter's trampoline, never deeper in the stack. */
  readonly granted: () => void;
}

/** One key's slots: how many are taken, and who waits for one, first come first served. */
interface Lane {
  readonly key: string;
  active: number;
  readonly waiting: Set<Claim>;
}

/**
 * Creates a {@link RunLimiter}. Keys are independent; a key without runs costs nothing.
 *
 * @example
 * ```ts
 * const limiter = createRunLimiter({ perKey: 1, mode: 'reject' });
 * limiter.run(chatId, () => client.run('c-1')).subscribe({ error: (e) => isConcurrencyLimitError(e) && reply('Busy') });
 * ```
 */
export function createRunLimiter(options: RunLimiterOptions): RunLimiter {
  // Typed as required, but a JavaScript caller can leave it out.
  if ((options as RunLimiterOptions | undefined) === undefined) throw new InvalidArgumentError('options', 'is required: { perKey, mode? }');
  objectArgument('options', options);
  const { perKey, mode = 'queue' } = options;
  if (!Number.isInteger(perKey) || perKey < 1) throw new InvalidArgumentError('perKey', `must be an integer ≥ 1 (got ${String(perKey)})`);
  // Typed as a mode, but a JavaScript caller can pass anything.
  const given: unknown = mode;
  if (given !== 'queue' && given !== 'reject') throw new InvalidArgumentError('mode', `must be 'queue' or 'reject' (got ${String(given)})`);

  const lanes = new Map<string, Lane>();
  const laneOf = (key: string): Lane => {
    const known = lanes.get(key);
    if (known !== undefined) return known;
    const lane: Lane = { key, active: 0, waiting: new Set() };
    lanes.set(key, lane);
    return lane;
  };
  const forgetIfIdle = (lane: Lane): void => {
    if (lane.active === 0 && lane.waiting.size === 0) lanes.delete(lane.key);
  };

  // A run that ends at once, and whose end starts the next (a queue of runs that complete
  // synchronously, a consumer that subscribes the next run as one completes), would nest one start in
  // the other until the stack overflows: every grant goes through this queue instead, run by the
  // outermost call, one after the other.
  const grants: Claim[] = [];
  let granting = false;
  const grant = (claim: Claim): void => {
    claim.state = 'granted';
    grants.push(claim);
    if (granting) return;
    granting = true;
    try {
      for (let next = 0; next < grants.length; next += 1) grants[next]?.granted();
    } finally {
      grants.length = 0;
      granting = false;
    }
  };

  const claimOn = (key: string, granted: () => void): Claim => ({ lane: laneOf(key), state: 'waiting', granted });
  /** Asks for a slot: granted now if one is free, else queued (`queue`) or refused (`false`). */
  const submit = (entry: Claim, queue: boolean): boolean => {
    const { lane } = entry;
    if (lane.active < perKey) {
      lane.active += 1;
      grant(entry);
    } else if (queue) lane.waiting.add(entry);
    else {
      entry.state = 'released';
      forgetIfIdle(lane);
      return false;
    }
    return true;
  };

  /** Gives the claim up: leaves the queue, or hands the slot to the first in line. Once; later calls do nothing. */
  const release = (entry: Claim): void => {
    const { lane, state } = entry;
    entry.state = 'released';
    if (state === 'waiting') lane.waiting.delete(entry);
    if (state !== 'granted') {
      forgetIfIdle(lane);
      return;
    }
    const [next] = lane.waiting;
    if (next === undefined) {
      lane.active -= 1;
      forgetIfIdle(lane);
      return;
    }
    lane.waiting.delete(next);
    grant(next);
  };

  return {
    run: <T>(key: string, run: () => Observable<T>) =>
      new Observable<T>((subscriber) => {
        let inner: Subscription | undefined;
        const entry = claimOn(key, () => {
          if (entry.state !== 'granted' || subscriber.closed) return;
          // Given back before the end is passed on: whoever reacts to it finds the slot free.
          inner = defer(run).subscribe({
            next: (value) => {
              subscriber.next(value);
            },
            error: (error: unknown) => {
              release(entry);
              subscriber.error(error);
            },
            complete: () => {
              release(entry);
              subscriber.complete();
            },
          });
        });
        if (!submit(entry, mode === 'queue')) {
          subscriber.error(new ConcurrencyLimitError(key, perKey));
          return undefined;
        }
        return () => {
          inner?.unsubscribe();
          release(entry);
        };
      }),
    acquire: (key, acquireOptions = {}) =>
      new Promise<() => void>((resolve, reject) => {
        const signal = abortSignalArgument('signal', objectArgument('options', acquireOptions).signal);
        const giveUp = (): void => {
          reject(signal?.reason instanceof Error ? signal.reason : new DOMException('The wait for a slot was aborted', 'AbortError'));
        };
        if (signal?.aborted === true) {
          giveUp();
          return;
        }
        const entry = claimOn(key, () => {
          signal?.removeEventListener('abort', onAbort);
          if (signal?.aborted === true) {
            release(entry);
            giveUp();
            return;
          }
          resolve(() => {
            release(entry);
          });
        });
        function onAbort(): void {
          if (entry.state !== 'waiting') return;
          release(entry);
          giveUp();
        }
        if (!submit(entry, mode === 'queue')) reject(new ConcurrencyLimitError(key, perKey));
        else if (entry.state === 'waiting') signal?.addEventListener('abort', onAbort, { once: true });
      }),
    tryAcquire: (key) => {
      const entry = claimOn(key, () => undefined);
      if (!submit(entry, false)) return undefined;
      return () => {
        release(entry);
      };
    },
    active: (key) => lanes.get(key)?.active ?? 0,
    queued: (key) => lanes.get(key)?.waiting.size ?? 0,
  };
}
