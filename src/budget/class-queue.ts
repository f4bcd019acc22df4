import type { GateTicket } from '../domain/requests.js';
import { IndexedHeap } from './indexed-heap.js';

/**
 * A request waiting for the budget. Its identity fields are fixed at arrival; the two slots are the
 * positions the class queue's heaps keep in it.
 *
 * @example
 * ```ts
 * const entry = queuedRequest(7, { endpoint: 'status', priority: 'status', key: 'we-1' }, 0, 3, 12, 12, false);
 * ```
 */
export interface QueuedRequest {
  /** The shell's handle on the waiting promise. */
  readonly id: number;
  readonly ticket: GateTicket;
  readonly enqueuedAt: number;
  /** Arrival order: the tie-break everywhere. */
  readonly arrival: number;
  /** Start-time fair queueing tag within the class (see `FairQueue`). */
  readonly tag: number;
  /** The turn it is served in: its tag, put back by the turns its read is deferred (read-need.ts). */
  readonly rank: number;
  /** A read certain to find a change, in its run's own turn: it goes ahead of the class's turns. */
  readonly cutsIn: boolean;
  /** Position in the class's heap by turn (tag, then arrival); −1 while out of it. */
  turnSlot: number;
  /** Position in the class's heap by age (enqueuedAt, then arrival); −1 while out of it. */
  ageSlot: number;
}

/**
 * A new waiting request, in no heap yet.
 *
 * @example
 * ```ts
 * const entry = queuedRequest(1, ticket, now, arrivals++, tag, tag, false);
 * ```
 */
export function queuedRequest(id: number, ticket: GateTicket, enqueuedAt: number, arrival: number, tag: number, rank: number, cutsIn: boolean): QueuedRequest {
  return { id, ticket, enqueuedAt, arrival, tag, rank, cutsIn, turnSlot: -1, ageSlot: -1 };
}

/**
 * Whether `a` comes before `b` in a class's round-robin: a read that cuts in first, then the turn it
 * is served in (its fair tag, put back by a deferral), then arrival.
 *
 * @example
 * ```ts
 * comesFirst(entry, other); // true when entry's turn is first
 * ```
 */
export function comesFirst(a: QueuedRequest, b: QueuedRequest): boolean {
  if (a.cutsIn !== b.cutsIn) return a.cutsIn;
  return a.rank !== b.rank ? a.rank < b.rank : a.arrival < b.arrival;
}

/**
 * Whether `a` has waited longer than `b`.
 *
 * @example
 * ```ts
 * waitedLonger(entry, other); // true when entry arrived first
 * ```
 */
export function waitedLonger(a: QueuedRequest, b: QueuedRequest): boolean {
  return a.enqueuedAt !== b.enqueuedAt ? a.enqueuedAt < b.enqueuedAt : a.arrival < b.arrival;
}

/**
 * The requests of one class that may be chosen, in two orders at once: by turn (whom the class
 * serves next) and by age (whom the starvation guard lets through). Add, remove and both heads in
 * O(log n) / O(1).
 */
export class ClassQueue {
  readonly #byTurn = new IndexedHeap<'turnSlot', QueuedRequest>('turnSlot', comesFirst);
  readonly #byAge = new IndexedHeap<'ageSlot', QueuedRequest>('ageSlot', waitedLonger);

  get size(): number {
    return this.#byTurn.size;
  }

  /** The request whose turn it is. */
  next(): QueuedRequest | undefined {
    return this.#byTurn.peek();
  }

  /** The request that has waited longest. */
  oldest(): QueuedRequest | undefined {
    return this.#byAge.peek();
  }

  add(entry: QueuedRequest): void {
    this.#byTurn.push(entry);
    this.#byAge.push(entry);
  }

  /** False when `entry` was not in this queue. */
  remove(entry: QueuedRequest): boolean {
    this.#byAge.remove(entry);
    return this.#byTurn.remove(entry);
  }
}
