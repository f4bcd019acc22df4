import type { KeyCadence } from '../domain/budget.js';
import type { GateTicket } from '../domain/requests.js';

export type { KeyCadence };

/**
 * Each run's polling as the budget lets it happen, per key (the execution id), with what keeps a key
 * alive: a request of it queued or in flight. A key is forgotten once it has not polled for the idle
 * time and has nothing queued or in flight: its run has ended or no longer needs the budget (a run
 * whose slow output read is still on its way is not idle).
 *
 * Incremental, so that no step scans every run: keys sit in a map in the order of their last poll
 * (re-inserted on each), so pruning reads only the keys that have gone idle; one that is idle but busy
 * leaves that order and is forgotten when its last request settles. The public record is rebuilt only
 * after a change, when someone reads it.
 */
export class KeyCadences {
  readonly #cadences = new Map<string, KeyCadence>();
  /** Keys by their last poll, oldest first; an idle key that was busy has left it. */
  readonly #byLastPoll = new Map<string, number>();
  readonly #busy = new Map<string, number>();
  #record: Readonly<Record<string, KeyCadence>> | undefined;

  constructor(private readonly idleMs: number) {}

  /** A request of `ticket`'s key was queued or sent (`+1`), or left the queue or was answered (`−1`). */
  busy(ticket: GateTicket, delta: 1 | -1, now: number): void {
    const key = ticket.key;
    if (key === undefined) return;
    const count = (this.#busy.get(key) ?? 0) + delta;
    if (count > 0) {
      this.#busy.set(key, count);
      return;
    }
    this.#busy.delete(key);
    // Idle and busy when pruned: forgotten now that nothing of it is left.
    const cadence = this.#cadences.get(key);
    if (cadence !== undefined && !this.#byLastPoll.has(key) && cadence.lastSentAt + this.idleMs <= now) this.#forget(key);
  }

  /**
   * A status poll of `ticket`'s key, queued at `enqueuedAt`, was sent at `now`. A read that cut in
   * (certain to find a change, fair-queue.ts) is not the run's cadence: it goes outside the turns, like
   * a read asked as urgent, and its run's next turn comes later for it.
   */
  polled(ticket: GateTicket, enqueuedAt: number, now: number, cutIn = false): void {
    const key = ticket.key;
    if (ticket.priority !== 'status' || key === undefined || cutIn) return;
    const previous = this.#cadences.get(key);
    const waitMs = now - enqueuedAt;
    this.#cadences.set(key, previous === undefined ? { lastSentAt: now, waitMs } : { lastSentAt: now, intervalMs: now - previous.lastSentAt, waitMs });
    this.#byLastPoll.delete(key);
    this.#byLastPoll.set(key, now);
    this.#record = undefined;
  }

  /** Forgets the keys idle for `idleMs` with nothing queued or in flight. */
  prune(now: number): void {
    for (const [key, lastSentAt] of this.#byLastPoll) {
      if (lastSentAt + this.idleMs > now) return;
      this.#byLastPoll.delete(key);
      if (!this.#busy.has(key)) this.#forget(key);
    }
  }

  /** How many keys (runs) poll now: polled within `idleMs`, or with a request queued or in flight. */
  get size(): number {
    return this.#cadences.size;
  }

  /** Every key's cadence, as plain data. */
  record(): Readonly<Record<string, KeyCadence>> {
    this.#record ??= Object.fromEntries(this.#cadences);
    return this.#record;
  }

  #forget(key: string): void {
    this.#cadences.delete(key);
    this.#record = undefined;
  }
}
