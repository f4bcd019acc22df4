import type { GateTicket } from '../domain/requests.js';
import { IndexedHeap } from './indexed-heap.js';

/**
 * A request waiting for the budget. Its identity fields are fixed at arrival; the two slots are the
 * positions the class queue's heaps keep in it.
 *
 * @example
 * ```ts
 * const entry = queuedRequest(7, { endpoint: 'status', priority: 'status', key: 'we-1' }, 0, 3, 12);
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
 * const entry = queuedRequest(1, ticket, now, arrivals++, tag);
 * ```
 */
export function queuedRequest(id: number, ticket: GateTicket, enqueuedAt: number, arrival: number, tag: number): QueuedRequest {
  return { id, ticket, enqueuedAt, arrival, tag, turnSlot: -1, ageSlot: -1 };
}

/**
 * Whether `a` comes before `b` in a class's round-robin: fair tag, then arrival.
 *
 * @example
 * ```ts
 * comesFirst(entry, other); // true when entry's turn is first
 * ```
 */
export function comesFirst(a: QueuedRequest, b: QueuedRequest): boolean {
  return a.tag !== b.tag ? a.tag < b.tag : a.arrival < b.arrival;
}

/**
 * Whether `a` has waited longer than `b`.
 *
 * @example
 * ```ts
 * waitedLonger(entry, other); // true when entry arrived first
 * ```
 */
/**
 * The order of a run's reads: by when each is due — when a change is most likely to have
 * come, as the run's learned durations say (`GateTicket.dueAt`), else when it arrived — so that a
 * saturated budget reads first the run most likely to have changed. Reads of which neither is timed
 * keep the class's round-robin (`comesFirst`): without a model, nothing changes.
 */
export function readsFirst(a: QueuedRequest, b: QueuedRequest): boolean {
  if (a.ticket.dueAt === undefined && b.ticket.dueAt === undefined) return comesFirst(a, b);
  const dueA = a.ticket.dueAt ?? a.enqueuedAt;
  const dueB = b.ticket.dueAt ?? b.enqueuedAt;
  return dueA !== dueB ? dueA < dueB : comesFirst(a, b);
}

export function waitedLonger(a: QueuedRequest, b: QueuedRequest): boolean {
  return a.enqueuedAt !== b.enqueuedAt ? a.enqueuedAt < b.enqueuedAt : a.arrival < b.arrival;
}

/**
 * The requests of one class that may be chosen, in two orders at once: by turn (whom the class
 * serves next) and by age (whom the starvation guard lets through). Add, remove and both heads in
 * O(log n) / O(1).
 */
export class ClassQueue {
  readonly #byTurn: IndexedHeap<'turnSlot', QueuedRequest>;
  readonly #byAge = new IndexedHeap<'ageSlot', QueuedRequest>('ageSlot', waitedLonger);

  /** `turnOrder`: whose turn comes first; the class's round-robin by default. */
  constructor(turnOrder: (a: QueuedRequest, b: QueuedRequest) => boolean = comesFirst) {
    this.#byTurn = new IndexedHeap<'turnSlot', QueuedRequest>('turnSlot', turnOrder);
  }

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
