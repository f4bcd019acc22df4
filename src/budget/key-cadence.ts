import type { QueuedRequest } from './fair-queue.js';
import type { GateTicket } from '../domain/requests.js';

/**
 * A run's polling as the budget lets it happen: the run layer shows it and adapts to it (no point
 * asking every 200 ms when the budget grants one poll every 4 s). Counted on status polls only:
 * they are a run's cadence, while outputs follow them and starts and aborts are one-offs.
 *
 * @example
 * ```ts
 * const cadence: KeyCadence = { lastSentAt: 5_000, intervalMs: 2_000, waitMs: 150 };
 * ```
 */
export interface KeyCadence {
  readonly lastSentAt: number;
  /** Time between the last two polls sent; absent after the first. */
  readonly intervalMs?: number;
  /** How long the last poll waited for the budget. */
  readonly waitMs: number;
}

/**
 * Cadence per key (the execution id).
 *
 * @example
 * ```ts
 * const cadences: KeyCadences = new Map();
 * ```
 */
export type KeyCadences = ReadonlyMap<string, KeyCadence>;

/**
 * The cadences after `entry` was sent at `now`.
 *
 * @example
 * ```ts
 * cadences = recordPoll(cadences, chosen, now);
 * ```
 */
export function recordPoll(cadences: KeyCadences, entry: QueuedRequest, now: number): KeyCadences {
  const key = entry.ticket.key;
  if (entry.ticket.priority !== 'status' || key === undefined) return cadences;
  const previous = cadences.get(key);
  const waitMs = now - entry.enqueuedAt;
  const cadence: KeyCadence =
    previous === undefined ? { lastSentAt: now, waitMs } : { lastSentAt: now, intervalMs: now - previous.lastSentAt, waitMs };
  return new Map(cadences).set(key, cadence);
}

/**
 * Forgets keys that have not polled for `idleMs` and have nothing queued or in flight: their run has
 * ended or no longer needs the budget. (A run whose slow output read is still on its way is not idle.)
 *
 * @example
 * ```ts
 * cadences = pruneCadences(cadences, [...state.queue, ...state.inFlight], now, 62_000);
 * ```
 */
export function pruneCadences(
  cadences: KeyCadences,
  busy: readonly { readonly ticket: GateTicket }[],
  now: number,
  idleMs: number,
): KeyCadences {
  let pruned: Map<string, KeyCadence> | undefined;
  let waiting: ReadonlySet<string | undefined> | undefined;
  for (const [key, cadence] of cadences) {
    if (cadence.lastSentAt + idleMs > now) continue;
    waiting ??= new Set(busy.map((entry) => entry.ticket.key));
    if (!waiting.has(key)) {
      pruned ??= new Map(cadences);
      pruned.delete(key);
    }
  }
  return pruned ?? cadences;
}
