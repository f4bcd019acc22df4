import type { RequestPriority } from '../domain/endpoints.js';
import type { GateTicket } from '../domain/requests.js';

/**
 * A binary min-heap ordered by `before`, whose items know their position: the heap writes it in the
 * item's `slot` field (−1 while out), so that removing an item from the middle (a waiting request
 * cancelled) costs O(log n) instead of a search. Push, pop and remove in O(log n), peek in O(1). An
 * item can be in as many heaps as it has slot fields, in one per field.
 */
export class IndexedHeap<K extends string, T extends Record<K, number>> {
  readonly #items: T[] = [];
  readonly #slot: K;
  readonly #before: (a: T, b: T) => boolean;

  constructor(slot: K, before: (a: T, b: T) => boolean) {
    this.#slot = slot;
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    this.#items.push(item);
    this.#up(this.#items.length - 1);
  }

  pop(): T | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  /** Takes `item` out wherever it sits; false when it is not in this heap. */
  remove(item: T): boolean {
    const index = item[this.#slot];
    if (this.#items[index] !== item) return false;
    const last = this.#items.pop();
    (item as Record<K, number>)[this.#slot] = -1;
    if (last !== undefined && last !== item) this.#fill(index, last);
    return true;
  }

  /**
   * Fills the hole at `start` with `item` (the last leaf, taken off): the hole goes down the path of
   * the earlier children to a leaf, one comparison a level, then `item` goes up from there to its
   * place — usually at once, a leaf being late in the order. About half the comparisons of a sift-down
   * that compares `item` too at every level: a burst of cancellations takes the head again and again.
   */
  #fill(start: number, item: T): void {
    const items = this.#items;
    let index = start;
    for (let left = 2 * index + 1, child = items[left]; child !== undefined; left = 2 * index + 1, child = items[left]) {
      const right = items[left + 1];
      const rightFirst = right !== undefined && this.#before(right, child);
      this.#place(rightFirst ? right : child, index);
      index = rightFirst ? left + 1 : left;
    }
    this.#place(item, index);
    this.#up(index);
  }

  #up(start: number): void {
    let index = start;
    const item = this.#items[index];
    if (item === undefined) return;
    while (index > 0) {
      const parentIndex = (index - 1) >>> 1;
      const parent = this.#items[parentIndex];
      if (parent === undefined || !this.#before(item, parent)) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(item, index);
  }

  #place(item: T, index: number): void {
    this.#items[index] = item;
    (item as Record<K, number>)[this.#slot] = index;
  }
}

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
  /**
   * The turn it is served in: its tag, put back by the turns its read is deferred (budget-core.ts), and
   * its tag again once that deferral has passed (`FairQueue.undefer`).
   */
  rank: number;
  /**
   * Its place within its turn: its arrival, or, for a read deferred until its change was likely, an
   * arrival taken when its deferral ended (`FairQueue.undefer`), as if it asked then.
   */
  place: number;
  /** A read certain to find a change, in its run's own turn: it goes ahead of the class's turns. */
  readonly cutsIn: boolean;
  /** A read its run's model timed for the run's share of the account, placed in the class's current turn (`ReadOrder.inCurrentTurn`). */
  readonly inCurrentTurn: boolean;
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
export function queuedRequest(id: number, ticket: GateTicket, enqueuedAt: number, arrival: number, tag: number, rank: number, cutsIn: boolean, inCurrentTurn = false): QueuedRequest {
  return { id, ticket, enqueuedAt, arrival, tag, rank, place: arrival, cutsIn, inCurrentTurn, turnSlot: -1, ageSlot: -1 };
}

/**
 * Whether `a` comes before `b` in a class's round-robin (or among the reads that cut in): the turn it
 * is served in (its fair tag, put back by a deferral), then its place in that turn (arrival).
 *
 * @example
 * ```ts
 * comesFirst(entry, other); // true when entry's turn is first
 * ```
 */
function comesFirst(a: QueuedRequest, b: QueuedRequest): boolean {
  return a.rank !== b.rank ? a.rank < b.rank : a.place < b.place;
}

/**
 * Whether `a` has waited longer than `b`.
 *
 * @example
 * ```ts
 * waitedLonger(entry, other); // true when entry arrived first
 * ```
 */
function waitedLonger(a: QueuedRequest, b: QueuedRequest): boolean {
  return a.enqueuedAt !== b.enqueuedAt ? a.enqueuedAt < b.enqueuedAt : a.arrival < b.arrival;
}

/**
 * How far a run's read that cuts in (a certain read, see `FairQueue`) may reach past the reads of the
 * turns: between two runs' cut-ins, one read of the turns goes for every this many of them waiting.
 * A cut-in is its run's next turn taken early, and every read waiting behind it goes one send later:
 * with a few runs (a day's, a tight account's) that is little, and each end still cuts in at once;
 * in a round of hundreds of runs started together, most of them ending within one round, each end cut
 * in ahead of all the others and the round took half as long again — every other run's next read came
 * that much later (200 runs streaming: p95 219 s, 195 s spaced so; 158 s with no cut-in, but then
 * each run's end waits a round). A run's cut-in that comes next after its own, no read of the turns
 * between (its status, then the output read that completes its end), is not spaced from it.
 */
const WAITING_PER_TURN_READ = 50;

/**
 * One class of the fair queue (see `FairQueue`): its flows and its virtual time, and the requests
 * that may be chosen, in three orders at once: the reads that cut in and the class's turns (whom the
 * class serves next), and age (whom the starvation guard lets through). Add, remove and the heads in
 * O(log n) / O(1).
 */
class ClassQueue {
  /** An entry is in one of these two, by its `cutsIn`; both keep its position in `turnSlot`. */
  readonly #cutIns = new IndexedHeap<'turnSlot', QueuedRequest>('turnSlot', comesFirst);
  readonly #turns = new IndexedHeap<'turnSlot', QueuedRequest>('turnSlot', comesFirst);
  readonly #byAge = new IndexedHeap<'ageSlot', QueuedRequest>('ageSlot', waitedLonger);
  /** Reads of the turns served since the last cut-in (as many as may go when none has cut in yet). */
  #turnReadsSinceCutIn = Infinity;
  /** The key of the last read that cut in. */
  #lastCutIn: string | undefined;
  /** The flows by key. */
  readonly #flows = new Map<string, Flow>();
  /**
   * Flows with nothing waiting that had a turn in the class's current one or later, by tag. At most
   * `MAX_IDLE_FLOWS` (a class whose keys never come back — aborts, starts — would otherwise keep one
   * per key while its turn does not move): past that the oldest is forgotten, and its next request
   * takes the class's current turn a turn early.
   */
  readonly #idle = new IndexedHeap<'slot', Flow>('slot', (a, b) => a.last < b.last);
  /** The tag of the last request served: the class's virtual time. */
  #clock = 0;
  /** How far its current turn has gone in reads placed in it (`ReadOrder.inCurrentTurn`): a turn is a read of every run. */
  #progress = 0;

  /** How many flows are remembered (waiting or idle): bounded by those waiting plus `MAX_IDLE_FLOWS`. */
  get flowCount(): number {
    return this.#flows.size;
  }

  /** A new request of this class with its fair tag (see `FairQueue.enqueue`), its flow told; not choosable until added. */
  register(id: number, ticket: GateTicket, now: number, arrival: number, order: ReadOrder | undefined): QueuedRequest {
    const clock = this.#clock;
    let tag = clock;
    let flow: Flow | undefined;
    if (ticket.key !== undefined) {
      flow = this.#flows.get(ticket.key);
      if (flow === undefined) this.#flows.set(ticket.key, (flow = { key: ticket.key, last: clock - 1, waiting: 0, cutFrom: undefined, slot: -1 }));
      else this.#idle.remove(flow);
      tag = order?.inCurrentTurn === true ? clock + this.#progress : Math.max(clock, flow.last + 1);
    }
    const cutFrom = flow?.cutFrom ?? tag;
    const cutsIn = order?.certain === true && tag < cutFrom + CUT_IN_TURNS;
    const entry = queuedRequest(id, ticket, now, arrival, tag, tag + (order?.defer ?? 0), cutsIn, order?.inCurrentTurn === true);
    if (flow !== undefined) {
      flow.last = entry.inCurrentTurn ? Math.max(flow.last, clock) : entry.tag;
      flow.cutFrom = cutsIn ? cutFrom : undefined;
      flow.waiting += 1;
    }
    return entry;
  }

  /** Takes `entry` out of the class (it was sent, or it left): out of the heaps, and its flow told. */
  unregister(entry: QueuedRequest): void {
    this.remove(entry);
    const key = entry.ticket.key;
    const flow = key === undefined ? undefined : this.#flows.get(key);
    if (flow !== undefined && --flow.waiting === 0) this.#rest(flow);
  }

  get size(): number {
    return this.#cutIns.size + this.#turns.size;
  }

  /**
   * The request whose turn it is: a read that cuts in, unless another run's cut in and fewer reads of
   * the turns have gone since than one per `WAITING_PER_TURN_READ` waiting.
   */
  next(): QueuedRequest | undefined {
    const cutIn = this.#cutIns.peek();
    const turn = this.#turns.peek();
    if (cutIn === undefined || turn === undefined) return cutIn ?? turn;
    const sameEnd = this.#turnReadsSinceCutIn === 0 && cutIn.ticket.key !== undefined && cutIn.ticket.key === this.#lastCutIn;
    return sameEnd || this.#turnReadsSinceCutIn >= Math.floor(this.#turns.size / WAITING_PER_TURN_READ) ? cutIn : turn;
  }

  /** The request that has waited longest. */
  oldest(): QueuedRequest | undefined {
    return this.#byAge.peek();
  }

  add(entry: QueuedRequest): void {
    (entry.cutsIn ? this.#cutIns : this.#turns).push(entry);
    this.#byAge.push(entry);
  }

  /** False when `entry` was not in this queue. */
  remove(entry: QueuedRequest): boolean {
    this.#byAge.remove(entry);
    return (entry.cutsIn ? this.#cutIns : this.#turns).remove(entry);
  }

  /** `entry` of this class was sent: see `FairQueue.served`. */
  served(entry: QueuedRequest): void {
    if (entry.cutsIn) {
      this.#turnReadsSinceCutIn = 0;
      this.#lastCutIn = entry.ticket.key;
      return;
    }
    this.#turnReadsSinceCutIn += 1;
    if (entry.inCurrentTurn) {
      this.#progress += 1 / Math.max(1, this.#flows.size);
      if (this.#progress >= 1) {
        this.#progress -= 1;
        this.#clock += 1;
      }
    } else if (entry.tag > this.#clock) {
      this.#clock = entry.tag;
      this.#progress = 0;
    }
    // Flows whose last turn is now past are forgotten.
    for (let flow = this.#idle.peek(); flow !== undefined && flow.last < this.#clock; flow = this.#idle.peek()) this.#forget(flow);
  }

  #forget(flow: Flow): void {
    this.#idle.remove(flow);
    this.#flows.delete(flow.key);
  }

  /**
   * A flow with nothing waiting is forgotten once its last turn is past: its next request takes the
   * class's current turn. Until then it is kept, so that its next request comes in the turn after.
   */
  #rest(flow: Flow): void {
    if (flow.last < this.#clock) {
      this.#flows.delete(flow.key);
      return;
    }
    this.#idle.push(flow);
    const oldest = this.#idle.peek();
    if (this.#idle.size > MAX_IDLE_FLOWS && oldest !== undefined) this.#forget(oldest);
  }
}

/**
 * The classes the budget serves, highest first: abort > start > interactive > a run's reads.
 *
 * @example
 * ```ts
 * FAIR_CLASSES.indexOf('interactive') < FAIR_CLASSES.indexOf('reads'); // true
 * ```
 */
export const FAIR_CLASSES = ['abort', 'start', 'interactive', 'reads'] as const;

/**
 * One of the budget's classes.
 *
 * @example
 * ```ts
 * const klass: FairClass = fairClassOf('output'); // 'reads'
 * ```
 */
export type FairClass = (typeof FAIR_CLASSES)[number];

/**
 * The class a request shares its fair turns in. A run's status and output reads are one flow: a run
 * reads its output between two status reads, so with output a class below status, a saturated budget
 * left a run waiting for its output (and so polling nothing) a minute while the others polled every
 * few seconds — and its `finished` waited on that read. Sharing one round-robin by run keeps every
 * run's cadence even.
 *
 * @example
 * ```ts
 * fairClassOf('status') === fairClassOf('output'); // true
 * ```
 */
export function fairClassOf(priority: RequestPriority): FairClass {
  switch (priority) {
    case 'abort':
    case 'start':
    case 'interactive':
      return priority;
    case 'status':
    case 'output':
      return 'reads';
    default:
      return unreachable(priority);
  }
}

/**
 * A class that may send now, seen by its two heads.
 *
 * @example
 * ```ts
 * const head: ClassHead = { klass: 'reads', next: queue.next()!, oldest: queue.oldest()! };
 * ```
 */
export interface ClassHead {
  readonly klass: FairClass;
  /** Whose turn it is in the class. */
  readonly next: QueuedRequest;
  /** Who has waited longest in it. */
  readonly oldest: QueuedRequest;
}

/**
 * The choice among the classes that may send now, and the updated count of overtakings.
 *
 * @example
 * ```ts
 * const { chosen, bypassed } = chooseNext(heads, state.bypassed, limits.starvationLimit);
 * ```
 */
export interface Choice {
  readonly chosen: QueuedRequest;
  readonly bypassed: number;
}

/**
 * Picks the next request: strict priority between classes, then the class's round-robin. No
 * starvation: `bypassed` counts consecutive sends that overtook a request of a lower class that could
 * have gone; once it reaches `starvationLimit`, the lower request that has waited longest goes instead
 * (an abort is never held back), so lower classes keep at least 1 / (starvationLimit + 1) of the
 * budget when higher ones saturate it.
 *
 * @example
 * ```ts
 * chooseNext([readsHead, interactiveHead], 9, 9).chosen; // the interactive call: it was overtaken nine times
 * ```
 */
export function chooseNext(heads: readonly [ClassHead, ...ClassHead[]], bypassed: number, starvationLimit: number): Choice {
  const [winner, ...lower] = [...heads].sort((a, b) => FAIR_CLASSES.indexOf(a.klass) - FAIR_CLASSES.indexOf(b.klass)) as [ClassHead, ...ClassHead[]];
  const [firstLower] = lower;
  if (firstLower === undefined) return { chosen: winner.next, bypassed: 0 };
  if (winner.klass !== 'abort' && bypassed >= starvationLimit) {
    const oldest = lower.reduce((best, head) => (waitedLonger(head.oldest, best) ? head.oldest : best), firstLower.oldest);
    return { chosen: oldest, bypassed: 0 };
  }
  return { chosen: winner.next, bypassed: bypassed + 1 };
}

/**
 * Per flow (a key within a class): the tag of its latest request and how many of its requests wait.
 * `cutFrom`: while its latest request cut in, the tag of the first of that row of cut-ins (`undefined`
 * otherwise). `slot`: its place in the heap of flows kept with nothing waiting (−1 while out of it).
 */
interface Flow {
  readonly key: string;
  last: number;
  waiting: number;
  cutFrom: number | undefined;
  slot: number;
}

/**
 * A certain read cuts in only within its run's next this many turns, counted from the first read of
 * the row that cuts in: its status read and the output read that completes it (the run's end). A run
 * whose read was just served in the class's current turn takes its next turns after it, so the window
 * counts from the run's own next turn, not from the class's: counted from the class's, the output read
 * that completes the end lost its cut-in and waited a whole round of every run, a minute or more on a
 * tight day. A run cannot cut in again until a read of its own has gone in its turn.
 */
const CUT_IN_TURNS = 2;

/**
 * How a read's need places it in its class (budget-core.ts): `certain`, it may go ahead of the turns;
 * `defer`, the turns it is put back; `inCurrentTurn`, its run's model timed it for the run's share of
 * the account (`retimedForShare` in budget-core.ts) and its change is likely when due: it takes the
 * class's current turn, not the turn after its run's last.
 */
export interface ReadOrder {
  readonly certain: boolean;
  readonly defer: number;
  readonly inCurrentTurn?: boolean;
}

/**
 * Every waiting request, by id and by class. Within a class the budget goes round-robin by key
 * (start-time fair queueing with unit costs): each request's tag is the turn it is served in — the
 * class's current turn (the tag last served), or, for a key that already had that turn or has
 * requests waiting, the turn after its last. So a key with several requests waiting gets one per
 * turn, interleaved with the other keys', and a key that asks late in a turn still gets that turn;
 * within a turn, arrival order. Requests without a key are each a flow of their own. Every operation
 * is O(log n) in the number waiting: the tag comes from the key's flow, not a scan of the queue.
 *
 * A request is registered (`enqueue`) apart from being choosable (`offer`): an identical start waits
 * in its line until its turn, and a run's read until its need is due (budget-core.ts),
 * registered in its turn and counted but out of its class's heaps.
 *
 * A run's read may be placed by its need (`ReadOrder`): put back by whole or partial turns while its
 * change is unlikely, or, certain to find one, ahead of every turn — only within the run's own next
 * turns (`CUT_IN_TURNS`), spaced from another run's by reads of the turns when many wait
 * (`WAITING_PER_TURN_READ`), and without moving the class's turn: its flow keeps the turn it took, so
 * the run's next read comes that much later.
 *
 * When the account gives each run a share shorter than its maximum gap, a run's model times its reads
 * for that share, and a read so timed whose change is likely when due (`ReadOrder.inCurrentTurn`) takes the class's current turn, not the turn after
 * its run's last, placed in it as far as the turn has gone (its tag a fraction past the turn's), and
 * the turn ends once as many have been served as runs in the class. The model already spends the
 * run's share — few reads while its change is unlikely, many where it is likely — and counting those
 * reads in turns as well put the run whose change was coming behind every run whose change was not,
 * each of its dense reads a turn later. A run has one read waiting at a time, so these reads still go
 * about one per run per round, in the order they asked; the less likely keep their run's turn, deferred.
 */
export class FairQueue {
  readonly #classes: Readonly<Record<FairClass, ClassQueue>> = {
    abort: new ClassQueue(),
    start: new ClassQueue(),
    interactive: new ClassQueue(),
    reads: new ClassQueue(),
  };
  readonly #entries = new Map<number, QueuedRequest>();
  readonly #depths: Record<RequestPriority, number> = { abort: 0, start: 0, interactive: 0, status: 0, output: 0 };
  #arrivals = 0;

  get size(): number {
    return this.#entries.size;
  }

  /** Requests waiting per priority. */
  depths(): Readonly<Record<RequestPriority, number>> {
    return { ...this.#depths };
  }

  get(id: number): QueuedRequest | undefined {
    return this.#entries.get(id);
  }

  /** The choosable requests of one class. */
  of(klass: FairClass): ClassQueue {
    return this.#classes[klass];
  }

  /**
   * Registers a request arriving at `now` with its fair tag; it is not choosable until `offer`ed.
   * `order`: a run's read placed by its need.
   */
  enqueue(id: number, ticket: GateTicket, now: number, order?: ReadOrder): QueuedRequest {
    const entry = this.#classes[fairClassOf(ticket.priority)].register(id, ticket, now, this.#arrivals++, order);
    this.#entries.set(id, entry);
    this.#depths[ticket.priority] += 1;
    return entry;
  }

  /** Makes a registered request choosable in its class. */
  offer(entry: QueuedRequest): void {
    this.#classes[fairClassOf(entry.ticket.priority)].add(entry);
  }

  /**
   * Serves a deferred read in its own turn again: its change has become likely, or it has been put
   * back as long as a deferral may last. It takes its place in that turn as if it asked now, so that
   * one deferred while the turn lasts long (a tight account, runs arriving) is not passed for ever by
   * the reads that ask after it.
   */
  undefer(entry: QueuedRequest): void {
    if (entry.rank === entry.tag) return;
    const queue = this.#classes[fairClassOf(entry.ticket.priority)];
    const offered = queue.remove(entry);
    entry.rank = entry.tag;
    entry.place = this.#arrivals++;
    if (offered) queue.add(entry);
  }

  /** Takes a request out of everything (it was sent, or it left); `undefined` when it is not waiting. */
  remove(id: number): QueuedRequest | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    this.#entries.delete(id);
    this.#classes[fairClassOf(entry.ticket.priority)].unregister(entry);
    this.#depths[entry.ticket.priority] -= 1;
    return entry;
  }

  /**
   * Moves the class's virtual time to the turn of a request that was sent — unless it cut in: a read
   * that went ahead of the turns does not end the turn of those it overtook — and counts it for the
   * spacing of cut-ins (`WAITING_PER_TURN_READ`). A read placed in the current turn (`ReadOrder.inCurrentTurn`)
   * is one run's read of that turn: the turn ends once there have been as many as runs in the class.
   */
  served(entry: QueuedRequest): void {
    this.#classes[fairClassOf(entry.ticket.priority)].served(entry);
  }

  /** How many flows of `klass` are remembered (waiting or idle): bounded by those waiting plus `MAX_IDLE_FLOWS`. */
  flowCount(klass: FairClass): number {
    return this.#classes[klass].flowCount;
  }
}

/** Idle flows remembered per class at most (see `ClassQueue`'s `#idle`). */
const MAX_IDLE_FLOWS = 1_024;

function unreachable(value: never): never {
  throw new Error(`Unexpected request priority: ${String(value)}`);
}

/** The identical starts of one key, in arrival order: `items[head]` onward, less those that left. */
interface Line {
  items: QueuedRequest[];
  head: number;
  readonly left: Set<number>;
}

/**
 * Identical starts waiting, one line per key (service.md §2.2: they must reach the service more than
 * 1 s apart, see `startReadyAt` in account-rules.ts). Only the first of a line can be chosen, and only while its key
 * is free; the others wait here, counted in the queue but out of its heaps, so a burst of identical
 * starts costs O(1) per start instead of a scan of every one at every step.
 */
export class StartLines {
  readonly #lines = new Map<string, Line>();

  /** Puts `entry` at the end of its key's line; true when it is first in line. */
  join(key: string, entry: QueuedRequest): boolean {
    const line = this.#lines.get(key);
    if (line === undefined) {
      this.#lines.set(key, { items: [entry], head: 0, left: new Set() });
      return true;
    }
    line.items.push(entry);
    return this.first(key) === entry;
  }

  /** The first in the key's line. */
  first(key: string): QueuedRequest | undefined {
    const line = this.#lines.get(key);
    if (line === undefined) return undefined;
    for (;;) {
      const entry = line.items[line.head];
      if (entry === undefined || !line.left.delete(entry.id)) return entry;
      line.head += 1;
    }
  }

  /** Takes `entry` out of its line (it was sent, or it left); returns the new first when it was first. */
  leave(key: string, entry: QueuedRequest): QueuedRequest | undefined {
    const line = this.#lines.get(key);
    if (line === undefined) return undefined;
    if (this.first(key) !== entry) {
      line.left.add(entry.id);
      return undefined;
    }
    line.head += 1;
    // Keep the array from growing without end under a steady stream of identical starts.
    if (line.head > 32 && line.head * 2 > line.items.length) {
      line.items = line.items.slice(line.head);
      line.head = 0;
    }
    const next = this.first(key);
    if (next === undefined) this.#lines.delete(key);
    return next;
  }
}
