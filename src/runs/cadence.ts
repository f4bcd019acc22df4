import { InvalidArgumentError } from '../errors/validation-errors.js';
import { DEFAULTS, type PollInterval } from '../domain/options.js';
import { timerDelay } from '../http/options.js';

export type { PollInterval };

export interface CadenceBounds {
  readonly minMs: number;
  readonly maxMs: number;
}

/** The default bounds (`DEFAULTS.polling`, where their reasons are written). */
export const DEFAULT_POLL_INTERVAL: CadenceBounds = DEFAULTS.polling;

/** Growth of the wait per quiet read. */
export const BACKOFF_FACTOR = 1.5;

/** Each wait is spread ±20% so that runs started together do not poll in lockstep. */
export const JITTER = 0.2;

/**
 * How long "every node done, execution still `executing`" counts as settling: two server ticks
 * (service.md §3.3). Longer than that the execution is stuck, not settling, and the reads back off again.
 */
export const SETTLING_WINDOW_MS = 3000;

/**
 * Fills in the run's bounds from the client's, then the defaults. Each given bound must be 0 or a
 * number of ms a timer keeps (see `timerDelay`), and a `minMs` above the `maxMs` given beside it is a mistake (`InvalidArgumentError`,
 * named after `name`); a `maxMs` that comes from a default and is below `minMs` is raised to it.
 */
export function cadenceBounds(interval: PollInterval = {}, defaults: PollInterval = {}, name = 'pollInterval'): CadenceBounds {
  checkInterval(defaults, 'polling');
  checkInterval(interval, name);
  const minMs = interval.minMs ?? defaults.minMs ?? DEFAULT_POLL_INTERVAL.minMs;
  const maxMs = Math.max(minMs, interval.maxMs ?? defaults.maxMs ?? DEFAULT_POLL_INTERVAL.maxMs);
  return { minMs, maxMs };
}

function checkInterval(interval: PollInterval, name: string): void {
  for (const key of ['minMs', 'maxMs'] as const) {
    const value: unknown = interval[key];
    // 0 reads again at once: fine behind a budget that paces, or against a test double.
    if (value !== undefined && value !== 0) timerDelay(`${name}.${key}`, value);
  }
  if (interval.minMs !== undefined && interval.maxMs !== undefined && interval.minMs > interval.maxMs) {
    throw new InvalidArgumentError(name, `minMs (${String(interval.minMs)}) exceeds maxMs (${String(interval.maxMs)})`);
  }
}

/**
 * What the last read showed: `changed` (the execution or a node changed status), `settling` (every node is done but the
 * execution has not turned terminal yet, service.md §3.3: the next tick will say `finish`), or `quiet`.
 */
export type Reading = 'changed' | 'settling' | 'quiet';

/** The un-jittered wait the cadence has backed off to. */
export interface CadenceState {
  readonly delayMs: number;
}

export function startCadence(bounds: CadenceBounds): CadenceState {
  return { delayMs: bounds.minMs };
}

/**
 * The wait before the next read and the cadence after it: back to the fastest after a change or while
 * settling, otherwise backing off exponentially. `random` (in [0, 1), injected for tests) spreads the
 * wait by ±`JITTER`; the wait always stays within the bounds.
 */
export function nextCadence(
  bounds: CadenceBounds,
  state: CadenceState,
  reading: Reading,
  random: () => number,
): { readonly waitMs: number; readonly state: CadenceState } {
  const delayMs = reading === 'quiet' ? Math.min(bounds.maxMs, state.delayMs * BACKOFF_FACTOR) : bounds.minMs;
  const spread = delayMs * (1 + JITTER * (2 * random() - 1));
  const waitMs = Math.round(Math.min(bounds.maxMs, Math.max(bounds.minMs, spread)));
  return { waitMs, state: { delayMs } };
}
