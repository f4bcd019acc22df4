import { defer, Observable, type Subscription } from 'rxjs';
import { ConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { InvalidArgumentError } from '../errors/validation-errors.js';

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
 * Limits how many runs are active at once per key (a user, a tenant, a chat). A slot is taken when
 * the run is subscribed and given back when it completes, errors or is unsubscribed; queued runs
 * start in the order they came.
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
  /** The runs of `key` in a slot now. */
  active(key: string): number;
  /** The runs of `key` waiting for a slot (always 0 in `reject` mode). */
  queued(key: string): number;
}

/** One key's slots: how many are taken, and who waits for one, first come first served. */
interface Lane {
  active: number;
  readonly waiting: (() => void)[];
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
  const { perKey, mode = 'queue' } = options;
  if (!Number.isInteger(perKey) || perKey < 1) throw new InvalidArgumentError('perKey', `must be an integer ≥ 1 (got ${String(perKey)})`);
  // Typed as a mode, but a JavaScript caller can pass anything.
  const given: unknown = mode;
  if (given !== 'queue' && given !== 'reject') throw new InvalidArgumentError('mode', `must be 'queue' or 'reject' (got ${String(given)})`);

  const lanes = new Map<string, Lane>();
  const laneOf = (key: string): Lane => {
    const known = lanes.get(key);
    if (known !== undefined) return known;
    const lane: Lane = { active: 0, waiting: [] };
    lanes.set(key, lane);
    return lane;
  };
  const forgetIfIdle = (key: string, lane: Lane): void => {
    if (lane.active === 0 && lane.waiting.length === 0) lanes.delete(key);
  };

  return {
    run: <T>(key: string, run: () => Observable<T>) =>
      new Observable<T>((subscriber) => {
        const lane = laneOf(key);
        let holding = false;
        let inner: Subscription | undefined;

        const release = (): void => {
          if (!holding) return;
          holding = false;
          lane.active -= 1;
          const next = lane.waiting.shift();
          if (next === undefined) forgetIfIdle(key, lane);
          else next();
        };
        // Released before the end is passed on: whoever reacts to it finds the slot free.
        const begin = (): void => {
          holding = true;
          lane.active += 1;
          inner = defer(run).subscribe({
            next: (value) => {
              subscriber.next(value);
            },
            error: (error: unknown) => {
              release();
              subscriber.error(error);
            },
            complete: () => {
              release();
              subscriber.complete();
            },
          });
        };

        if (lane.active < perKey) begin();
        else if (mode === 'reject') {
          forgetIfIdle(key, lane);
          subscriber.error(new ConcurrencyLimitError(key, perKey));
        } else lane.waiting.push(begin);

        return () => {
          const place = lane.waiting.indexOf(begin);
          if (place >= 0) {
            lane.waiting.splice(place, 1);
            forgetIfIdle(key, lane);
          }
          inner?.unsubscribe();
          release();
        };
      }),
    active: (key) => lanes.get(key)?.active ?? 0,
    queued: (key) => lanes.get(key)?.waiting.length ?? 0,
  };
}
