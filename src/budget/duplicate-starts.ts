import type { GateTicket } from '../domain/requests.js';
import { IndexedHeap } from './indexed-heap.js';

/**
 * The key that makes two starts identical (same canvas and exact body, service.md §2.2), or `undefined`
 * for any other request. By endpoint, not class: a start given a lower priority is still a start.
 *
 * @example
 * ```ts
 * identicalStartKey({ endpoint: 'run', priority: 'start', key: 'c-1 {}' }); // 'c-1 {}'
 * ```
 */
export function identicalStartKey(ticket: GateTicket): string | undefined {
  return ticket.endpoint === 'run' ? ticket.key : undefined;
}

/**
 * One identical-start key: how many of its attempts are on their way, and when the last was sent or answered.
 *
 * @example
 * ```ts
 * const mark: StartMark = { inFlight: 0, lastAt: 1_000 };
 * ```
 */
export interface StartMark {
  readonly inFlight: number;
  readonly lastAt: number;
}

/** When a mark with nothing on its way may be forgotten. */
interface Expiry {
  readonly at: number;
  readonly key: string;
  slot: number;
}

/**
 * Identical starts we sent recently, account-wide. The service marks a start when it arrives and
 * refuses an identical one within 1 s with 409 (service.md §2.2). An arrival lies between our send and
 * the answer, so the next identical start waits for the previous one's answer (or failure) and then
 * the spacing: its own arrival is then surely more than 1 s later. Marks are forgotten once their
 * spacing has passed with nothing on its way, found through a heap of expiries (O(log n) each).
 */
export class StartMarks {
  readonly #marks = new Map<string, StartMark>();
  readonly #expiries = new IndexedHeap<'slot', Expiry>('slot', (a, b) => a.at < b.at);

  constructor(private readonly spacingMs: number) {}

  /** How many keys are marked. */
  get size(): number {
    return this.#marks.size;
  }

  /**
   * When a start with this key may be sent: at once without a mark, never (`Infinity`: wait for the
   * answer) while an identical start is on its way, else the spacing after the last one.
   */
  readyAt(key: string): number {
    const mark = this.#marks.get(key);
    if (mark === undefined) return Number.NEGATIVE_INFINITY;
    return mark.inFlight > 0 ? Number.POSITIVE_INFINITY : mark.lastAt + this.spacingMs;
  }

  /** An attempt of this key was sent (`sent`) or answered (`answered`) at `now`. */
  mark(key: string, now: number, event: 'sent' | 'answered'): void {
    const mark = this.#marks.get(key) ?? { inFlight: 0, lastAt: now };
    const inFlight = event === 'sent' ? mark.inFlight + 1 : Math.max(0, mark.inFlight - 1);
    const lastAt = Math.max(mark.lastAt, now);
    this.#marks.set(key, { inFlight, lastAt });
    if (inFlight === 0) this.#expiries.push({ at: lastAt + this.spacingMs, key, slot: -1 });
  }

  /** When the next mark may be forgotten (a key freed), if any. */
  nextExpiryAt(): number | undefined {
    return this.#expiries.peek()?.at;
  }

  /** Forgets the marks whose spacing has passed with nothing on their way; returns their keys, now free. */
  prune(now: number): string[] {
    const freed: string[] = [];
    for (let expiry = this.#expiries.peek(); expiry !== undefined && expiry.at <= now; expiry = this.#expiries.peek()) {
      this.#expiries.pop();
      // A later send or answer moved the mark on: this expiry is stale, a newer one (or none) stands.
      const mark = this.#marks.get(expiry.key);
      if (mark !== undefined && mark.inFlight === 0 && mark.lastAt + this.spacingMs <= now) {
        this.#marks.delete(expiry.key);
        freed.push(expiry.key);
      }
    }
    return freed;
  }
}
