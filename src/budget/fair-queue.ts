import { REQUEST_PRIORITIES } from '../domain/endpoints.js';
import type { GateTicket } from '../domain/requests.js';
import type { RequestPriority } from '../domain/endpoints.js';

/**
 * A request waiting for the budget.
 *
 * @example
 * ```ts
 * const entry: QueuedRequest = { id: 7, ticket: { endpoint: 'status', priority: 'status', key: 'we-1' }, enqueuedAt: 0, arrival: 3, tag: 12 };
 * ```
 */
export interface QueuedRequest {
  /** The shell's handle on the waiting promise. */
  readonly id: number;
  readonly ticket: GateTicket;
  readonly enqueuedAt: number;
  /** Arrival order: the tie-break everywhere. */
  readonly arrival: number;
  /** Start-time fair queueing tag within the priority class (see `fairTag`). */
  readonly tag: number;
}

/**
 * Per priority class, the tag of the last request served: the class's virtual time.
 *
 * @example
 * ```ts
 * const clocks: VirtualTimes = { abort: 0, start: 0, status: 0, output: 0, search: 0 };
 * ```
 */
export type VirtualTimes = Readonly<Record<RequestPriority, number>>;

/**
 * The class a request shares its fair turns in. A run's status and output reads are one flow: a run
 * reads its output between two status reads, so with output a class below status, a saturated budget
 * left a run waiting for its output (and so polling nothing) a minute while the others polled every
 * few seconds — and its `finished` waited on that read. Sharing one round-robin by run keeps every
 * run's cadence even.
 */
function fairClass(priority: RequestPriority): RequestPriority {
  return priority === 'output' ? 'status' : priority;
}

/**
 * A tag for a new request, so that within a class the budget goes round-robin by key: a key with
 * several requests waiting gets tags one apart, interleaved with the other keys', while a key's first
 * request goes behind everything already waiting (start-time fair queueing with unit costs). When every
 * key has at most one request waiting, as a polling run has, this is plain arrival order, which is
 * round-robin. Requests without a key are each a flow of their own.
 *
 * @example
 * ```ts
 * fairTag(queue, clocks, { endpoint: 'status', priority: 'status', key: 'we-1' });
 * ```
 */
export function fairTag(queue: readonly QueuedRequest[], clocks: VirtualTimes, ticket: GateTicket): number {
  const flowClass = fairClass(ticket.priority);
  let latest = clocks[flowClass];
  if (ticket.key !== undefined) {
    for (const entry of queue) {
      if (fairClass(entry.ticket.priority) === flowClass && entry.ticket.key === ticket.key) latest = Math.max(latest, entry.tag);
    }
  }
  return latest + 1;
}

/**
 * The choice among the requests that may go now, and the updated count of overtakings.
 *
 * @example
 * ```ts
 * const { chosen, bypassed } = chooseNext(eligible, state.bypassed, limits.starvationLimit);
 * ```
 */
export interface Choice {
  readonly chosen: QueuedRequest;
  readonly bypassed: number;
}

/**
 * Picks the next request: strict priority (abort > start > a run's status and output reads > search),
 * then fair tag, then arrival. No starvation: `bypassed` counts consecutive sends that overtook an eligible
 * lower-priority request; once it reaches `starvationLimit`, the lower-priority request that has
 * waited longest goes instead (an abort is never held back), so lower classes keep at least
 * 1 / (starvationLimit + 1) of the budget when higher ones saturate it.
 *
 * @example
 * ```ts
 * chooseNext([statusEntry, searchEntry], 9, 9).chosen; // searchEntry: it was overtaken nine times
 * ```
 */
export function chooseNext(eligible: readonly [QueuedRequest, ...QueuedRequest[]], bypassed: number, starvationLimit: number): Choice {
  const winner = eligible.reduce((best, entry) => (strictlyBefore(entry, best) ? entry : best));
  const lower = eligible.filter((entry) => rank(entry) > rank(winner));
  const [firstLower] = lower;
  if (firstLower === undefined) return { chosen: winner, bypassed: 0 };
  if (winner.ticket.priority !== 'abort' && bypassed >= starvationLimit) {
    const oldest = lower.reduce((best, entry) => (waitedLonger(entry, best) ? entry : best), firstLower);
    return { chosen: oldest, bypassed: 0 };
  }
  return { chosen: winner, bypassed: bypassed + 1 };
}

/**
 * The virtual times after serving `entry`.
 *
 * @example
 * ```ts
 * clocks = advanceVirtualTime(clocks, chosen);
 * ```
 */
export function advanceVirtualTime(clocks: VirtualTimes, entry: QueuedRequest): VirtualTimes {
  const flowClass = fairClass(entry.ticket.priority);
  return { ...clocks, [flowClass]: Math.max(clocks[flowClass], entry.tag) };
}

/**
 * Every class at virtual time 0.
 *
 * @example
 * ```ts
 * const clocks = initialVirtualTimes();
 * ```
 */
export function initialVirtualTimes(): VirtualTimes {
  return { abort: 0, start: 0, status: 0, output: 0, search: 0 };
}

function rank(entry: QueuedRequest): number {
  return REQUEST_PRIORITIES.indexOf(fairClass(entry.ticket.priority));
}

function strictlyBefore(a: QueuedRequest, b: QueuedRequest): boolean {
  const byRank = rank(a) - rank(b);
  if (byRank !== 0) return byRank < 0;
  if (a.tag !== b.tag) return a.tag < b.tag;
  return a.arrival < b.arrival;
}

function waitedLonger(a: QueuedRequest, b: QueuedRequest): boolean {
  return a.enqueuedAt !== b.enqueuedAt ? a.enqueuedAt < b.enqueuedAt : a.arrival < b.arrival;
}
